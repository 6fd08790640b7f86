"""OSM IM / SOL006 VNFDs with guest EPA -> VM Descriptor or VNF template."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import nfvplace
from nfvplace.dialects import DialectError, convert, detect
from nfvplace.lint import lint_text
from nfvplace.models import VmDescriptor, VnfTemplate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dialects"


def test_example_guest_epa() -> None:
    vm = nfvplace.load(EXAMPLES / "osm-vnfd-guest-epa.yaml")
    assert isinstance(vm, VmDescriptor)
    (cpu_set,) = vm.cpu_sets
    assert cpu_set.howtogroup == ((0, 1), (2, 3), (4, 5), (6, 7))
    assert cpu_set.memory_mib == 10240
    assert cpu_set.hugepages is not None
    assert cpu_set.hugepages.count == 10
    assert [(i.name, i.mode.value, i.speed_gbps) for i in cpu_set.interfaces] == [
        ("eth0", "sriov", 10)
    ]
    assert [i.name for i in vm.interfaces] == ["mgmt"]
    assert vm.cpu_thread_policy.value == "prefer"


def _sol006(vdus: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "vnfd": {
            "id": "two-vdu",
            "provider": "ACME",
            "vdu": vdus,
            "virtual-compute-desc": [
                {
                    "id": "big",
                    "virtual-cpu": {"num-virtual-cpu": 4, "pinning": {"policy": "static"}},
                    "virtual-memory": {
                        "size": 8,
                        "mempage-size": "SIZE_2MB",
                        "numa-node-policy": {"node-cnt": 2},
                    },
                },
                {
                    "id": "small",
                    "virtual-cpu": {"num-virtual-cpu": 2},
                    "virtual-memory": {"size": 2.0},
                },
            ],
        }
    }


def test_sol006_two_vdus_make_a_template() -> None:
    data = _sol006(
        [
            {"id": "dp", "virtual-compute-desc": "big"},
            {"id": "ctl", "virtual-compute-desc": "small"},
        ]
    )
    assert detect(data) == "osm-sol006"
    conversion = convert(data)
    template = VnfTemplate.model_validate(conversion.data)
    assert [m.name for m in template.members] == ["dp", "ctl"]
    dp = template.members[0].descriptor
    assert dp is not None
    assert [cs.vcpus for cs in dp.cpu_sets] == [(0, 1), (2, 3)]
    assert [cs.memory_mib for cs in dp.cpu_sets] == [4096, 4096]
    assert dp.cpu_sets[0].hugepages is not None
    assert dp.cpu_sets[0].hugepages.size_kib == 2048
    ctl = template.members[1].descriptor
    assert ctl is not None
    assert (ctl.vcpus, ctl.memory_mib, ctl.cpu_sets) == (2, 2048, ())
    assert template.vendor == "ACME"


def test_missing_compute_desc_is_one_error_at_the_vdu() -> None:
    text = "vnfd:\n  id: x\n  vdu:\n    - id: a\n      virtual-compute-desc: nope\n"
    result = lint_text(text, "x.yaml")
    errors = [f for f in result.findings if f.severity.value == "error"]
    assert [(f.rule, f.path, f.line) for f in errors] == [
        ("NFV001", "vnfd.vdu[0].virtual-compute-desc", 5)
    ]


def test_bad_numa_policy_is_reported_at_the_source_node() -> None:
    text = (
        "vnfd-catalog:\n  vnfd:\n    - id: v\n      vdu:\n        - id: a\n"
        "          vm-flavor: {vcpu-count: 2, memory-mb: 1024}\n"
        "          guest-epa:\n            cpu-pinning-policy: DEDICATED\n"
        "            mempage-size: SIZE_1GB\n"
        "            numa-node-policy:\n              node-cnt: 1\n              node:\n"
        "                - id: 0\n                  memory-mb: 512\n"
    )
    result = lint_text(text, "v.yaml")
    found = {f.rule: (f.path, f.line) for f in result.findings}
    vdu = "vnfd-catalog.vnfd[0].vdu[0]"
    # 512 MiB holds no 1 GiB page, and the node's memory is not the flavor's 1024 MiB.
    assert found["NFV206"] == (f"{vdu}.guest-epa.numa-node-policy.node[0]", 13)
    assert found["NFV202"] == (f"{vdu}.vm-flavor.memory-mb", 6)


@pytest.mark.parametrize(("word", "size"), [("LARGE", "large"), ("PREFER_LARGE", "any")])
@pytest.mark.parametrize("pinning", ["DEDICATED", "SHARED"])
def test_large_page_words_are_page_sizes_chosen_on_the_host_node(
    word: str, size: str, pinning: str
) -> None:
    text = (
        "vnfd-catalog:\n  vnfd:\n    - id: v\n      vdu:\n        - id: a\n"
        "          vm-flavor: {vcpu-count: 2, memory-mb: 2048}\n"
        f"          guest-epa:\n            cpu-pinning-policy: {pinning}\n"
        f"            mempage-size: {word}\n"
        "            numa-node-policy:\n              node-cnt: 2\n"
    )
    result = lint_text(text, "v.yaml")
    vm = VmDescriptor.model_validate(convert(yaml.safe_load(text)).data)
    assert [(cs.hugepages.size if cs.hugepages else None) for cs in vm.cpu_sets] == [size] * 2
    assert [cs.floating for cs in vm.cpu_sets] == [pinning == "SHARED"] * 2
    assert not [f for f in result.findings if f.severity.value == "error"]


def _vdu(**extra: object) -> dict[str, object]:
    vdu: dict[str, object] = {
        "id": "v",
        "vm-flavor": {"vcpu-count": 2, "memory-mb": 2048},
        "guest-epa": {"cpu-pinning-policy": "DEDICATED", "cpu-thread-pinning-policy": "ISOLATE"},
    }
    for key, value in extra.items():
        target = vdu["guest-epa"] if key.startswith("g_") else vdu
        assert isinstance(target, dict)
        target[key.removeprefix("g_").replace("_", "-")] = value
    return {"vnfd": {"vdu": [vdu]}}


@pytest.mark.parametrize(
    ("vdu", "field", "expected"),
    [
        (_vdu(hypervisor_epa={"type": "REQUIRE_KVM"}), ("hypervisor", "type"), "kvm"),
        (
            _vdu(vswitch_epa={"ovs-acceleration": "MANDATORY"}),
            ("hypervisor", "vswitch"),
            {"accelerated": True},
        ),
        (
            _vdu(g_pcie_device=[{"device-id": "qat", "count": 2}]),
            ("pci_devices",),
            [{"class": "other", "count": 2, "model": "qat"}],
        ),
        (
            _vdu(g_numa_node_policy={"node-cnt": 1, "mem-policy": "PREFERRED"}),
            ("hypervisor", "required_capabilities"),
            ["cpu_pinning"],
        ),
        (_vdu(host_epa={"cpu-arch": "REQUIRE_X86_64"}), ("processor", "architecture"), "x86_64"),
        (
            _vdu(host_epa={"cpu-feature": [{"feature": "REQUIRE_AES"}]}),
            ("processor", "required_flags"),
            ["aes"],
        ),
    ],
)
def test_osm_epa_parts_are_carried(
    vdu: dict[str, object], field: tuple[str, ...], expected: object
) -> None:
    value: object = convert(vdu).data
    for key in field:
        assert isinstance(value, dict)
        value = value[key]
    assert value == expected


@pytest.mark.parametrize("quota", ["cpu-quota", "mem-quota", "disk-io-quota", "vif-quota"])
def test_osm_quotas_are_reported(quota: str) -> None:
    conversion = convert(_vdu(**{"g_" + quota.replace("-", "_"): {"limit": 10}}))
    assert any(n.path[-1] == quota and "runtime limit" in n.message for n in conversion.notes)


def test_osm_values_outside_the_vocabulary_are_errors() -> None:
    with pytest.raises(DialectError, match="'dedicated', 'shared', 'any'"):
        convert({"vnfd": {"vdu": [{"id": "v", "guest-epa": {"cpu-pinning-policy": "PINNED"}}]}})


DATA = Path(__file__).resolve().parents[1] / "data" / "dialects" / "osm-im"


def _real(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((DATA / name).read_text())
    assert isinstance(loaded, dict)
    return loaded


@pytest.mark.parametrize(
    ("name", "catalog", "index"),
    [
        ("hackfest_epasriov_vnfd.yaml", "vnfd:vnfd-catalog", 1),  # two VDUs, the second twice
        ("ubuntu_epa_virtio_vnfd.yaml", "vnfd-catalog", 0),  # one VDU, twice: a VNF of one member
    ],
)
def test_vdu_count_is_the_members_count(name: str, catalog: str, index: int) -> None:
    data = _real(name)
    vdu = data[catalog]["vnfd"][0]["vdu"][index]
    vdu["count"] = "2"
    conversion = convert(data)
    template = VnfTemplate.model_validate(conversion.data)
    assert [m.count for m in template.members] == [2 if i == index else 1 for i in range(index + 1)]
    vdu_path = (catalog, "vnfd", 0, "vdu", index)
    assert conversion.origin_of(("members", index, "count")) == (*vdu_path, "count")
    assert not [n for n in conversion.notes if n.path == (*vdu_path, "count")]


def test_host_epa_preferences_refuse_no_host_and_are_named() -> None:
    host_epa = {
        "cpu-arch": "PREFER_X86_64",
        "cpu-vendor": "PREFER_INTEL",
        "cpu-feature": [{"feature": "PREFER_AES"}, {"feature": "REQUIRE_AVX2"}],
    }
    conversion = convert(_vdu(host_epa=host_epa))
    assert conversion.data["processor"] == {"required_flags": ["avx2"]}
    at = ("vnfd", "vdu", 0, "host-epa")
    preferences = {n.path: n.message for n in conversion.notes if "preference" in n.message}
    assert set(preferences) == {(*at, "cpu-arch"), (*at, "cpu-vendor"), (*at, "cpu-feature", 0)}
    assert "PREFER_AES" in preferences[(*at, "cpu-feature", 0)]


def _ubuntu_two_nodes(node: dict[str, Any], vcpus: int) -> dict[str, Any]:
    """The real ubuntu_epa_virtio VNFD with node-cnt 2 and one listed node."""
    data = _real("ubuntu_epa_virtio_vnfd.yaml")
    vdu = data["vnfd-catalog"]["vnfd"][0]["vdu"][0]
    vdu["vm-flavor"]["vcpu-count"] = vcpus  # memory-mb: 2048
    policy = vdu["guest-epa"]["numa-node-policy"]
    policy["node-cnt"] = 2
    policy["node"] = [node]
    return data


def test_an_unlisted_numa_node_gets_its_own_id() -> None:
    data = _ubuntu_two_nodes({"id": 1, "paired-threads": {"num-paired-threads": 1}}, 4)
    vm = VmDescriptor.model_validate(convert(data).data)
    assert [(cs.id, cs.vcpus, cs.howtogroup, cs.memory_mib) for cs in vm.cpu_sets] == [
        (1, (0, 1), ((0, 1),), 1024),
        (0, (2, 3), (), 1024),
    ]
    assert not [f for f in lint_text(yaml.safe_dump(data), "u.yaml").findings if f.code]


def test_an_unlisted_numa_node_gets_the_remaining_vcpus_and_memory() -> None:
    node = {"id": 0, "vcpu": [{"id": i} for i in range(4)], "memory-mb": 1536}
    vm = VmDescriptor.model_validate(convert(_ubuntu_two_nodes(node, 6)).data)
    assert [(cs.id, cs.vcpus, cs.memory_mib) for cs in vm.cpu_sets] == [
        (0, (0, 1, 2, 3), 1536),
        (1, (4, 5), 512),
    ]
    assert (vm.total_vcpus, vm.total_memory_mib) == (6, 2048)


def test_listed_numa_memory_beyond_the_flavor_is_named_against_the_flavor() -> None:
    data = _ubuntu_two_nodes({"id": 0, "vcpu": [{"id": 0}], "memory-mb": 3072}, 2)
    (finding,) = [f for f in lint_text(yaml.safe_dump(data), "u.yaml").findings if f.code]
    assert finding.path == "vnfd-catalog.vnfd[0].vdu[0].vm-flavor.memory-mb"
    assert "memory-mb add up to 3072 MiB of the VDU's 2048 MiB" in finding.message


def test_more_listed_numa_nodes_than_node_cnt_is_an_error() -> None:
    data = _ubuntu_two_nodes({"id": 0, "vcpu": [{"id": 0}]}, 2)
    policy = data["vnfd-catalog"]["vnfd"][0]["vdu"][0]["guest-epa"]["numa-node-policy"]
    policy["node-cnt"] = 1
    policy["node"].append({"id": 1, "vcpu": [{"id": 1}]})
    with pytest.raises(DialectError, match="node-cnt is 1 but the policy lists 2 nodes"):
        convert(data)
