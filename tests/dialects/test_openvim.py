"""OpenVIM / openmano `numas` -> VM Descriptor or VNF template."""

from __future__ import annotations

from pathlib import Path

import pytest

import nfvplace
from nfvplace.dialects import DialectError, convert, detect
from nfvplace.lint import lint_text
from nfvplace.models import VmDescriptor, VnfTemplate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dialects"


def test_example_vbras() -> None:
    vm = nfvplace.load(EXAMPLES / "openvim-vbras.yaml")
    assert isinstance(vm, VmDescriptor)
    (cpu_set,) = vm.cpu_sets
    assert len(cpu_set.vcpus) == 16
    assert len(cpu_set.howtogroup) == 8
    assert cpu_set.hugepages is not None
    assert cpu_set.hugepages.count == 2
    assert [(i.mode.value, i.bandwidth_gbps) for i in cpu_set.interfaces] == [("dedicated", 10)] * 4
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
