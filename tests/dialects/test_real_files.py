"""The 38 real public dialect files (tests/data/dialects, see its README for sources and licences):
each is read as its dialect, into what it says, with every loss or assumption reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nfvplace
from nfvplace.dialects.base import json_pointer
from nfvplace.errors import DescriptorError
from nfvplace.lint import lint_file
from nfvplace.models import ComputeHostDescriptor, VmDescriptor, VnfTemplate
from nfvplace.reader import read, read_path

DATA = Path(__file__).resolve().parents[1] / "data" / "dialects"
FILES = sorted(p for p in DATA.rglob("*") if p.suffix in (".yaml", ".json", ".xml"))

# file -> (dialect, kind loaded, or the error / "missing")
EXPECTED: dict[str, tuple[str, str]] = {
    "openmano/dataplaneVNF1.yaml": ("openvim", "vnf"),
    "openmano/dataplaneVNF2.yaml": ("openvim", "vnf"),
    "openmano/dataplaneVNF3.yaml": ("openvim", "vnf"),
    "openmano/dataplaneVNF_2VMs.yaml": ("openvim", "vnf"),
    "openmano/vnf-template.yaml": ("openvim", "vnf"),
    "openstack/flavor-get-resp.json": ("openstack-flavor", "vmd"),
    "openstack/hot_tosca_flavor_all_numa_count.yaml": ("heat", "vmd"),
    "openstack/hot_tosca_flavor_all_numa_nodes.yaml": ("heat", "vmd"),
    "openstack/hot_tosca_flavor_numa_nodes_count.yaml": ("heat", "vmd"),
    "openstack/hot_tosca_sriov.yaml": ("heat", "missing"),
    "openvim/2Th_2G.yaml": ("openvim", "vmd"),
    "openvim/5PTh_8G_2I.yaml": ("openvim", "vmd"),
    "openvim/cirros_flavor.yaml": ("openstack-flavor", "vmd"),
    "openvim/flavor.yaml": ("openvim", "vmd"),
    "openvim/host-example0.yaml": ("openvim-host", "chd"),
    "openvim/host-example1.yaml": ("openvim-host", "chd"),
    "openvim/host-example2.yaml": ("openvim-host", "chd"),
    "openvim/host-example3.yaml": ("openvim-host", "chd"),
    "openvim/new_flavor.yaml": ("openvim", "missing"),
    "openvim/server.yaml": ("openvim", "vmd"),
    "osm-im/IMS-ALLIN1__vnfd.yaml": ("osm-sol006", "vmd"),
    "osm-im/hackfest_epasriov_vnfd.yaml": ("osm-sol006", "vnf"),
    "osm-im/ref12_vnfd.yaml": ("osm-sol006", "missing"),
    "osm-im/ref22_vnfd.yaml": ("osm-sol006", "vmd"),
    "osm-im/ubuntu_epa_virtio_vnfd.yaml": ("osm-sol006", "vmd"),
    "sol001/df_scalable.yaml": ("sol001-tosca", "vnf"),
    "sol001/vnfd_helloworld_single.yaml": ("sol001-tosca", "vnf"),
    "sol006/complex-vnfd.xml": ("osm-sol006", "vnf"),
    "sol006/nfv-vnfd.xml": ("osm-sol006", "vmd"),
    "tosca-nfv/tosca-vnfd-cpu-dedicate.yaml": ("tacker-tosca-nfv", "vmd"),
    "tosca-nfv/tosca-vnfd-hugepages.yaml": ("tacker-tosca-nfv", "vmd"),
    "tosca-nfv/tosca-vnfd-numadefine.yaml": ("tacker-tosca-nfv", "vmd"),
    "tosca-nfv/tosca-vnfd-vcpu-topology.yaml": ("tacker-tosca-nfv", "vmd"),
    "tosca-nfv/tosca_flavor_all_numa_count.yaml": ("tacker-tosca-nfv", "vmd"),
    "tosca-nfv/tosca_flavor_all_numa_nodes.yaml": ("tacker-tosca-nfv", "vmd"),
    "tosca-nfv/tosca_flavor_numa_nodes_count.yaml": ("tacker-tosca-nfv", "vmd"),
    "tosca-nfv/tosca_flavor_with_wrong_cpu.yaml": ("tacker-tosca-nfv", "error"),
    "tosca-nfv/tosca_sriov.yaml": ("tacker-tosca-nfv", "missing"),
}
KINDS: dict[str, Any] = {"vmd": VmDescriptor, "vnf": VnfTemplate, "chd": ComputeHostDescriptor}


def _name(path: Path) -> str:
    return str(path.relative_to(DATA))


def test_every_real_file_is_in_the_table() -> None:
    assert sorted(_name(p) for p in FILES) == sorted(EXPECTED)
    assert len(FILES) == 38


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_real_file_is_read_as_its_dialect(path: Path) -> None:
    dialect, kind = EXPECTED[_name(path)]
    document = read_path(path)
    if kind == "error":
        with pytest.raises(DescriptorError):
            read(document)
        return
    reading = read(document)
    assert reading.dialect == dialect
    if kind == "missing":
        assert any(n.kind == "missing" for n in reading.notes)
        with pytest.raises(DescriptorError, match="does not say everything"):
            nfvplace.load(path)
        return
    assert not any(n.kind == "missing" for n in reading.notes)
    assert isinstance(nfvplace.load(path), KINDS[kind])
    result = lint_file(path)
    assert result.dialect == dialect
    assert not [f for f in result.findings if f.severity.value == "error"]


def _vm(path: str) -> VmDescriptor:
    loaded = nfvplace.load(DATA / path)
    assert isinstance(loaded, VmDescriptor)
    return loaded


def _members(path: str) -> list[VmDescriptor]:
    loaded = nfvplace.load(DATA / path)
    assert isinstance(loaded, VnfTemplate)
    return [m.descriptor for m in loaded.members if m.descriptor is not None]


def _modes(vm: VmDescriptor) -> list[str]:
    inside = [i.mode.value for cs in vm.cpu_sets for i in cs.interfaces]
    return inside + [i.mode.value for i in vm.interfaces]


@pytest.mark.parametrize(
    ("path", "modes"),
    [
        ("openmano/dataplaneVNF2.yaml", ["dedicated", "dedicated", "sriov", "vswitch", "vswitch"]),
        ("openmano/dataplaneVNF3.yaml", ["sriov", "sriov", "vswitch"]),
        ("openvim/flavor.yaml", ["dedicated", "sriov"]),
        ("openvim/server.yaml", ["dedicated", "sriov", "vswitch"]),  # networks: mgmt0
    ],
)
def test_openvim_dedicated_no_is_an_sriov_vf(path: str, modes: list[str]) -> None:
    vm = _vm(path) if not path.startswith("openmano") else _members(path)[0]
    assert _modes(vm) == modes


def test_osm_ubuntu_epa_reads_paired_threads_host_and_hypervisor_epa() -> None:
    vm = _vm("osm-im/ubuntu_epa_virtio_vnfd.yaml")
    (cpu_set,) = vm.cpu_sets
    assert cpu_set.vcpus == (0, 1)
    assert cpu_set.howtogroup == ((0, 1),)
    assert vm.cpu_thread_policy.value == "prefer"
    assert vm.processor is not None
    assert set(vm.processor.required_flags) == {"lm", "pdpe1gb", "ht"}
    assert vm.hypervisor is not None
    assert vm.hypervisor.type is not None
    assert vm.hypervisor.type.value == "kvm"


def test_osm_sriov_and_passthrough_interfaces() -> None:
    vm = _vm("osm-im/ref22_vnfd.yaml")
    assert sorted(_modes(vm)) == ["dedicated", "sriov", "vswitch"]
    assert vm.cpu_thread_policy.value == "prefer"  # DEDICATED without a thread policy


def test_sol001_direct_physical_connection_point_is_passthrough() -> None:
    vdu1, vdu2 = _members("sol001/vnfd_helloworld_single.yaml")
    assert _modes(vdu1) == ["dedicated", "vswitch"]
    assert _modes(vdu2) == ["vswitch"]


def test_tacker_numa_layout_and_thread_allocation() -> None:
    vm = _vm("tosca-nfv/tosca_flavor_all_numa_nodes.yaml")
    assert [cs.vcpus for cs in vm.cpu_sets] == [(0, 1), (2, 3, 4, 5)]
    assert [cs.memory_mib for cs in vm.cpu_sets] == [1024, 3072]
    assert vm.cpu_thread_policy.value == "isolate"


def test_tacker_and_heat_say_the_same_for_each_pair() -> None:
    for tacker, heat in [
        ("tosca_flavor_all_numa_count.yaml", "hot_tosca_flavor_all_numa_count.yaml"),
        ("tosca_flavor_numa_nodes_count.yaml", "hot_tosca_flavor_numa_nodes_count.yaml"),
    ]:
        a, b = _vm(f"tosca-nfv/{tacker}"), _vm(f"openstack/{heat}")
        assert (a.cpu_sets, a.vcpus, a.memory_mib) == (b.cpu_sets, b.vcpus, b.memory_mib)


def test_tacker_wrong_cpu_affinity_names_the_field_and_the_values() -> None:
    with pytest.raises(DescriptorError) as caught:
        nfvplace.load(DATA / "tosca-nfv" / "tosca_flavor_with_wrong_cpu.yaml")
    (issue,) = caught.value.issues
    assert issue.path is not None
    assert issue.path.endswith("cpu_allocation.cpu_affinity")
    assert "'shared', 'dedicated'" in issue.message
    assert "dedicatedss" in issue.message


def test_openvim_host_becomes_a_chd_that_places_openvim_flavors() -> None:
    host = nfvplace.load(DATA / "openvim" / "host-example1.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    assert [len(n.cpus) for n in host.numa_nodes] == [24, 24]
    assert not host.numa_nodes[0].cpus[0].eligible
    assert [len(p.vfs) for n in host.numa_nodes for nic in n.nics for p in nic.ports] == [8] * 8
    assert host.provenance is not None
    assert "processor.model" in host.provenance.unknown
    result = nfvplace.place([host], _vm("openvim/5PTh_8G_2I.yaml"))
    assert result.configurations


def test_sol006_xml_deployment_flavour() -> None:
    template = nfvplace.load(DATA / "sol006" / "complex-vnfd.xml")
    assert isinstance(template, VnfTemplate)
    assert [(m.name, m.count) for m in template.members] == [
        ("control-plane-active", 1),
        ("control-plane-standby", 1),
        ("data-plane", 2),
    ]
    assert template.anti_affinity[0].members == ("control-plane-active", "control-plane-standby")


def test_incomplete_files_are_read_with_missing_notes() -> None:
    result = lint_file(DATA / "osm-im" / "ref12_vnfd.yaml")
    missing = [f for f in result.findings if f.rule == "NFV007"]
    assert [f.path for f in missing] == ["vnfd-catalog.vnfd[0].vdu[1]"] * 2
    assert not [f for f in result.findings if f.severity.value == "error"]
    placeholders = read(read_path(DATA / "openvim" / "new_flavor.yaml")).notes
    assert "/flavor/extended/numas/0/threads" in {json_pointer(n.path) for n in placeholders}


def test_xml_with_entities_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bomb.xml"
    path.write_text('<!DOCTYPE v [<!ENTITY a "aaaa">]><vnfd>&a;</vnfd>')
    with pytest.raises(DescriptorError, match="unsafe"):
        nfvplace.load(path)


def test_sarif_locations_are_in_the_xml_source() -> None:
    import json

    from nfvplace.lint import LintReport, to_sarif

    path = DATA / "sol006" / "complex-vnfd.xml"
    sarif = json.loads(to_sarif(LintReport((lint_file(path),)), "test"))
    located = {
        r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]: r["locations"][0][
            "physicalLocation"
        ]["region"]["startLine"]
        for r in sarif["runs"][0]["results"]
        if r["locations"][0].get("logicalLocations")
    }
    text = path.read_text().splitlines()
    line = located["nfv.vnfd[0].int-virtual-link-desc"]
    assert "<int-virtual-link-desc>" in text[line - 1]


def test_openmano_internal_connections_are_links() -> None:
    template = nfvplace.load(DATA / "openmano" / "dataplaneVNF_2VMs.yaml")
    assert isinstance(template, VnfTemplate)
    (link,) = template.links
    assert [(e.member, e.interface) for e in link.endpoints] == [
        ("VNF_2VMs-VM1", "xe0"),
        ("VNF_2VMs-VM2", "xe0"),
    ]
