"""OpenVIM / openmano `numas` -> VM Descriptor or VNF template."""

from __future__ import annotations

from pathlib import Path

import pytest

import nfvplace
from nfvplace.dialects import DialectError, convert, detect
from nfvplace.lint import lint_text
from nfvplace.models import VmDescriptor, VnfTemplate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dialects"
DATA = Path(__file__).resolve().parents[1] / "data" / "dialects"


def test_example_vbras() -> None:
    vm = nfvplace.load(EXAMPLES / "openvim-vbras.yaml")
    assert isinstance(vm, VmDescriptor)
    (cpu_set,) = vm.cpu_sets
    assert len(cpu_set.vcpus) == 8
    assert len(cpu_set.howtogroup) == 4
    assert cpu_set.hugepages is not None
    assert cpu_set.hugepages.count == 2
    assert [(i.mode.value, i.bandwidth_gbps) for i in cpu_set.interfaces] == [("sriov", 10)] * 4
    assert [i.name for i in vm.interfaces] == ["mgmt"]


def test_openmano_vnf_with_two_vnfcs() -> None:
    data = {
        "vnf": {
            "name": "dp",
            "VNFC": [
                {
                    "name": "a",
                    "numas": [
                        {
                            "cores": 2,
                            "memory": 1,
                            "interfaces": [
                                {"name": "x", "dedicated": "yes:sriov", "bandwidth": "1 Gbps"}
                            ],
                        }
                    ],
                },
                {
                    "name": "b",
                    "numas": [
                        {"paired-threads": 1, "paired-threads-id": [[0, 1]], "memory": 2},
                        {"threads": 2, "memory": 1},
                    ],
                },
            ],
        }
    }
    assert detect(data) == "openvim"
    template = VnfTemplate.model_validate(convert(data).data)
    a, b = (m.descriptor for m in template.members)
    assert a is not None
    assert b is not None
    assert a.cpu_sets[0].vcpus == (0, 1)
    assert a.cpu_sets[0].howtogroup == ()
    assert a.cpu_sets[0].interfaces[0].mode.value == "sriov"
    assert [cs.vcpus for cs in b.cpu_sets] == [(0, 1), (2, 3)]
    assert b.cpu_sets[1].thread_policy is not None
    assert b.cpu_sets[1].thread_policy.value == "prefer"


def test_bad_dedicated_value() -> None:
    with pytest.raises(DialectError, match="dedicated must be"):
        convert({"numas": [{"cores": 1, "interfaces": [{"name": "x", "dedicated": "maybe"}]}]})


def test_bad_pair_is_reported_with_its_line() -> None:
    result = lint_text("name: v\nnumas:\n  - paired-threads-id:\n      - [0, 1, 2]\n", "v.yaml")
    (finding,) = [f for f in result.findings if f.rule == "NFV001"]
    assert finding.path == "numas[0].paired-threads-id[0]"
    assert finding.line == 4


@pytest.mark.parametrize(
    ("dedicated", "mode"),
    [("yes", "dedicated"), ("yes:sriov", "sriov"), ("no", "sriov"), (False, "sriov")],
)
def test_dedicated_no_is_an_sriov_vf(dedicated: object, mode: str) -> None:
    iface = {"name": "x", "dedicated": dedicated, "bandwidth": "1 Gbps"}
    data = convert({"numas": [{"cores": 1, "memory": 1, "interfaces": [iface]}]}).data
    assert data["cpu_sets"][0]["interfaces"][0]["mode"] == mode


def test_openmano_numas_empty_with_vcpus_and_ram_is_a_plain_vm() -> None:
    data = {"vnf": {"name": "x", "VNFC": [{"name": "a", "numas": [], "vcpus": 2, "ram": 1024}]}}
    (member,) = convert(data).data["members"]
    assert member["descriptor"]["vcpus"] == 2
    assert member["descriptor"]["memory_mib"] == 1024
    assert member["descriptor"]["cpu_oversubscription"] is True


# openmano's traditional cloud VM (its vnfs/examples/linux.yaml): no `numas`, virtio ports only.
CLOUD_VNFC = {
    "name": "linux-VM",
    "vcpus": 1,
    "ram": 1024,
    "bridge-ifaces": [{"name": "eth0", "vpci": "0000:00:11:0"}],
    "numas": [],
}


def test_openmano_cloud_vnfc_keeps_its_bridge_ifaces() -> None:
    data = {"vnf": {"name": "linux", "VNFC": [CLOUD_VNFC]}}
    conversion = convert(data)
    (member,) = VnfTemplate.model_validate(conversion.data).members
    assert member.descriptor is not None
    assert [(i.name, i.mode.value) for i in member.descriptor.interfaces] == [("eth0", "vswitch")]
    origin = conversion.origin_of(("members", 0, "descriptor", "interfaces", 0))
    assert origin == ("vnf", "VNFC", 0, "bridge-ifaces", 0)


def test_openmano_vnfc_without_numas_beside_a_dataplane_one_is_a_plain_vm() -> None:
    cloud = {k: v for k, v in CLOUD_VNFC.items() if k != "numas"}
    dataplane = {"name": "dp", "numas": [{"paired-threads": 1, "memory": 1}]}
    data = {"vnf": {"name": "mixed", "VNFC": [dataplane, cloud]}}
    template = VnfTemplate.model_validate(convert(data).data)
    plain = template.members[1].descriptor
    assert plain is not None
    assert (plain.total_vcpus, plain.cpu_oversubscription) == (1, True)
    assert [i.name for i in plain.interfaces] == ["eth0"]


def test_openvim_server_networks_are_vswitch_ports_and_its_host_a_dropped_preference() -> None:
    path = DATA / "openvim" / "server.yaml"
    vm = nfvplace.load(path)
    assert isinstance(vm, VmDescriptor)
    assert [(i.name, i.mode.value) for i in vm.interfaces] == [("mgmt0", "vswitch")]
    result = lint_text(path.read_text(), str(path))
    (dropped,) = [f for f in result.findings if f.rule == "NFV005"]
    assert dropped.path == "server.hostId"
