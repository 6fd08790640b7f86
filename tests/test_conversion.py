"""`nfvplace.convert`: any format in, nfvplace or a dialect out, and round trips that say the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import nfvplace
from nfvplace.conversion import convert
from nfvplace.errors import DescriptorError, LintError
from nfvplace.models.vmd import VmDescriptor

DATA = Path(__file__).resolve().parent / "data" / "dialects"

PINNED: dict[str, Any] = {
    "schema": "nfvplace/vmd/v1",
    "name": "dp",
    "hypervisor": {
        "type": "kvm",
        "required_capabilities": ["cpu_pinning", "numa_memory_pinning", "hugepage_numa_pinning"],
    },
    "cpu_thread_policy": "prefer",
    "cpu_sets": [
        {
            "id": 0,
            "vcpus": [0, 1, 2, 3],
            "memory_mib": 4096,
            "hugepages": {"size": "1GiB", "count": 4},
        },
        {"id": 1, "vcpus": [4, 5], "memory_mib": 2048, "hugepages": {"size": "1GiB", "count": 2}},
    ],
}
SHARED: dict[str, Any] = {
    "schema": "nfvplace/vmd/v1",
    "name": "web",
    "vcpus": 2,
    "memory_mib": 2048,
    "cpu_oversubscription": True,
}
OPENVIM: dict[str, Any] = {
    "schema": "nfvplace/vmd/v1",
    "name": "vr",
    "hypervisor": {
        "required_capabilities": ["cpu_pinning", "numa_memory_pinning", "hugepage_numa_pinning"],
        "required_capability_sets": ["io_virtualization"],
    },
    "cpu_sets": [
        {
            "id": 0,
            "vcpus": [0, 1, 2, 3],
            "howtogroup": [[0, 1], [2, 3]],
            "memory_mib": 4096,
            "hugepages": {"size": "1GiB", "count": 4},
            "interfaces": [
                {"name": "xe0", "mode": "dedicated", "speed_gbps": 10, "bandwidth_gbps": 10},
                {"name": "xe1", "mode": "sriov", "speed_gbps": 1, "bandwidth_gbps": 1},
            ],
        }
    ],
}


def _vm(data: dict[str, Any]) -> VmDescriptor:
    return VmDescriptor.model_validate(data)


@pytest.mark.parametrize(
    ("vm", "target"),
    [
        (PINNED, "nova"),
        (SHARED, "nova"),
        (PINNED, "osm"),
        (SHARED, "osm"),
        ({**PINNED, "hypervisor": {**PINNED["hypervisor"], "type": None}}, "sol006"),
        (OPENVIM, "openvim"),
    ],
)
def test_round_trip_is_identical_for_what_the_dialect_can_say(
    vm: dict[str, Any], target: str
) -> None:
    written = convert(vm, to=target)
    assert not [f for f in written.findings if f.kind == "dropped"], written.findings
    back = convert(written.data)
    assert back.dialect is not None
    assert _vm(back.data) == _vm(vm)


def test_what_a_dialect_cannot_say_is_a_finding() -> None:
    written = convert(OPENVIM, to="nova")
    paths = {f.path for f in written.findings}
    assert "/cpu_sets/0/interfaces" in paths
    assert "/hypervisor" in paths  # io_virtualization: a flavor says nothing of ports
    assert "/cpu_sets/0/howtogroup" not in paths  # every vCPU paired: written as `require`
    assert convert(OPENVIM, to="nova", strict=True).ok is False


def test_incomplete_files_convert_and_strict_fails() -> None:
    loose = convert(DATA / "openstack" / "hot_tosca_sriov.yaml")
    assert loose.ok
    assert not loose.complete
    assert loose.data["interfaces"] == [
        {"name": "CP1", "mode": "vswitch"},
        {"name": "CP2", "mode": "sriov"},
    ]
    (missing,) = [f for f in loose.findings if f.kind == "missing"]
    assert missing.path == "/resources/VDU1/properties/flavor"
    assert not convert(DATA / "openstack" / "hot_tosca_sriov.yaml", strict=True).ok


def test_xml_findings_are_xpaths() -> None:
    result = convert(DATA / "sol006" / "nfv-vnfd.xml")
    assert (result.data["vcpus"], result.data["memory_mib"]) == (2, 4096)
    assert [f.path for f in result.findings] == [
        "/vnfd/virtual-compute-desc[1]/virtual-memory/size"
    ]


def test_vnf_member_files_are_inlined_relative_to_the_template(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "f.json").write_text(
        (DATA / "openstack" / "flavor-get-resp.json").read_text()
    )
    (tmp_path / "t.yaml").write_text(
        "schema: nfvplace/vnf/v1\nname: t\nmembers:\n  - {name: a, file: m/f.json}\n"
    )
    result = nfvplace.convert(tmp_path / "t.yaml")
    assert result.data["members"][0]["descriptor"]["name"] == "m1.small.description"


def test_a_vnf_sent_without_its_directory_cannot_write_its_file_members() -> None:
    document = {
        "schema": "nfvplace/vnf/v1",
        "name": "t",
        "members": [{"name": "a", "file": "a.json"}],
    }
    with pytest.raises(DescriptorError) as raised:
        convert(document, to="sol006")
    assert raised.value.code == "nfvplace.input.reference"
    assert raised.value.issues[0].path == "/members/0/file"


def test_unknown_target_is_refused() -> None:
    with pytest.raises(DescriptorError, match="unknown target"):
        convert(SHARED, to="vmware")


def _vnf(anti_affinity: bool) -> dict[str, Any]:
    sol006_pinned = {**PINNED, "hypervisor": {**PINNED["hypervisor"], "type": None}}
    vnf: dict[str, Any] = {
        "schema": "nfvplace/vnf/v1",
        "name": "site",
        "vendor": "ACME",
        "version": "1.2",
        "members": [
            {"name": "dp", "descriptor": sol006_pinned, "count": 2},
            {"name": "web", "descriptor": SHARED},
        ],
    }
    if anti_affinity:
        vnf["anti_affinity"] = [{"members": ["dp", "web"]}]
    return vnf


@pytest.mark.parametrize(("target", "anti_affinity"), [("osm", False), ("sol006", True)])
def test_a_vnf_of_several_vms_round_trips(target: str, anti_affinity: bool) -> None:
    vnf = _vnf(anti_affinity)
    written = convert(vnf, to=target)
    assert not [f for f in written.findings if f.kind == "dropped"], written.findings
    back = convert(written.data)
    assert back.dialect == "osm-sol006"
    assert nfvplace.VnfTemplate.model_validate(back.data) == nfvplace.VnfTemplate.model_validate(
        vnf
    )


def test_what_a_vnf_writer_cannot_say_is_a_finding() -> None:
    vnf = _vnf(anti_affinity=True)
    for member, name in zip(vnf["members"], ("a", "b"), strict=True):  # the link's ends
        member["descriptor"] = {
            **member["descriptor"],
            "interfaces": [{"name": name, "mode": "vswitch"}],
        }
    vnf["links"] = [
        {
            "name": "l",
            "endpoints": [{"member": "dp", "interface": "a"}, {"member": "web", "interface": "b"}],
        }
    ]
    paths = {f.path for f in convert(vnf, to="osm").findings}
    assert {"/anti_affinity", "/links"} <= paths
    with pytest.raises(DescriptorError, match="--to openvim writes one VM Descriptor"):
        convert(vnf, to="openvim")
    nova = convert(vnf, to="nova")  # a flavor per member; what a flavor cannot say is named
    assert [f["name"] for f in nova.data["flavors"]] == [f"{vnf['name']}-dp", f"{vnf['name']}-web"]
    assert {"/anti_affinity", "/links"} <= {f.path for f in nova.findings}


CONTRADICTING = json.loads(
    (Path(__file__).parent / "data" / "descriptors" / "vcpus-contradict-cpu-sets.json").read_text()
)  # a top-level vcpus of 1, cpu-sets holding 2: lint's NFV105


@pytest.mark.parametrize("target", ["nova", "osm", "sol006", "openvim"])
def test_a_descriptor_lint_refuses_is_not_written_to_a_dialect(target: str) -> None:
    """A writer would write a document its own reader refuses (node-cnt 2 for 1 vCPU): lint's
    refusal instead, with its rule, the field and the fix, as every other door gives it."""
    with pytest.raises(LintError) as raised:
        convert(CONTRADICTING, to=target)
    assert raised.value.code == "nfvplace.input.invalid"
    (issue,) = raised.value.issues
    assert issue.path == "vcpus"
    assert issue.message.startswith("NFV105")
    assert convert(CONTRADICTING).ok  # read into nfvplace's format it converts: lint says why
