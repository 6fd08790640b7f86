"""OpenStack flavor extra specs: the mapping, and a warning for what Nova cannot express."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from nfvplace.models import VmConfiguration, VmDescriptor
from nfvplace.render import render_openstack
from nfvplace.render.openstack import cpu_flag_trait, nova_page_size

from ._support import load_config, load_host, load_vm


def _specs(text: str) -> dict[str, str]:
    document = yaml.safe_load(text)
    specs = document["flavor"]["extra_specs"]
    assert isinstance(specs, dict)
    return specs


def _vm(**data: Any) -> VmDescriptor:
    return VmDescriptor.model_validate({"name": "t", **data})


def _config(**data: Any) -> VmConfiguration:
    return VmConfiguration.model_validate({"vm": "t", "host": "h", **data})


def test_figure8_from_the_vmd() -> None:
    result = render_openstack(load_config("figure8"), load_vm("figure8"), load_host())
    document = yaml.safe_load(result.text)
    assert document["flavor"]["vcpus"] == 14
    assert document["flavor"]["ram"] == 14336
    specs = document["flavor"]["extra_specs"]
    assert specs["hw:cpu_policy"] == "dedicated"
    assert specs["hw:cpu_thread_policy"] == "require"
    assert specs["hw:cpu_threads"] == "2"
    assert specs["hw:numa_nodes"] == "2"
    assert specs["hw:numa_cpus.0"] == "0-7"
    assert specs["hw:numa_mem.0"] == "10240"
    assert specs["hw:numa_cpus.1"] == "8-13"
    assert specs["hw:numa_mem.1"] == "4096"
    assert specs["hw:mem_page_size"] == "1GB"
    assert specs["hw:pci_numa_affinity_policy"] == "required"
    assert specs["trait:HW_CPU_X86_AESNI"] == "required"
    assert document["ports"] == [
        {"name": "eth0", "binding:vnic_type": "direct-physical"},
        {"name": "eth1", "binding:vnic_type": "direct"},
    ]
    joined = "\n".join(result.warnings)
    assert "4096 MiB of its 10240 MiB in hugepages" in joined  # Nova cannot back part of a node
    assert "bandwidth between cpu-sets" in joined
    assert "QoS minimum-bandwidth" in joined
    assert "not enforced" in joined
    assert "openstack flavor create" in result.text


def test_vran_du_realtime_and_emulator_threads() -> None:
    specs = _specs(render_openstack(load_config("vran-du"), load_vm("vran-du")).text)
    assert specs["hw:cpu_realtime"] == "yes"
    assert specs["hw:cpu_realtime_mask"] == "^0-1"
    assert specs["hw:emulator_threads_policy"] == "isolate"
    assert specs["trait:HW_CPU_X86_AVX512F"] == "required"


def test_same_specs_from_the_configuration_alone() -> None:
    from_vm = _specs(render_openstack(load_config("vran-du"), load_vm("vran-du")).text)
    from_config = _specs(render_openstack(load_config("vran-du")).text)
    hw = {k: v for k, v in from_vm.items() if k.startswith("hw:")}
    assert from_config == hw


def test_plain_vm_is_shared() -> None:
    result = render_openstack(load_config("plain"))
    assert _specs(result.text) == {"hw:cpu_policy": "shared"}


def test_pinned_and_floating_vcpus_are_nova_mixed() -> None:
    config = _config(
        cpu_sets=[{"id": 0, "numa_node": 0, "vcpu_pins": {0: 1, 1: 2}, "memory_mib": 1024}],
        shared={"vcpus": 2, "cpus": [30, 31], "memory_mib": 512},
    )
    result = render_openstack(config)
    specs = _specs(result.text)
    assert specs["hw:cpu_policy"] == "mixed"
    assert specs["hw:cpu_dedicated_mask"] == "0-1"
    assert specs["hw:numa_cpus.0"] == "0-3"
    assert specs["hw:numa_mem.0"] == "1536"
    assert any("floating vCPUs 2-3" in w for w in result.warnings)


def test_vhost_user_without_hugepages_asks_for_large_pages() -> None:
    config = _config(
        cpu_sets=[{"id": 0, "numa_node": 0, "vcpu_pins": {0: 1}, "memory_mib": 1024}],
        interfaces=[{"name": "v", "mode": "vswitch", "vhost_user": True}],
    )
    result = render_openstack(config)
    assert _specs(result.text)["hw:mem_page_size"] == "large"
    assert any("vhost-user" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("vm", "spec", "value", "warning"),
    [
        # pairs next to single vCPUs: one thread policy for all
        (
            {
                "cpu_thread_policy": "isolate",
                "cpu_sets": [
                    {"id": 0, "vcpus": [0, 1, 2], "howtogroup": [[0, 1]], "memory_mib": 1024}
                ],
            },
            "hw:cpu_thread_policy",
            "isolate",
            "one thread policy to every vCPU",
        ),
        # pairs not (2k, 2k+1)
        (
            {
                "cpu_sets": [
                    {
                        "id": 0,
                        "vcpus": [0, 1, 2, 3],
                        "howtogroup": [[0, 2], [1, 3]],
                        "memory_mib": 1024,
                    }
                ]
            },
            "hw:cpu_thread_policy",
            "require",
            "not (2k, 2k+1)",
        ),
        # different page sizes
        (
            {
                "cpu_sets": [
                    {
                        "id": 0,
                        "vcpus": [0],
                        "memory_mib": 1024,
                        "hugepages": {"size": "2MiB", "count": 512},
                    },
                    {
                        "id": 1,
                        "vcpus": [1],
                        "memory_mib": 1024,
                        "hugepages": {"size": "1GiB", "count": 1},
                    },
                ]
            },
            "hw:mem_page_size",
            "1GB",
            "different page sizes",
        ),
        # every vCPU realtime without isolated emulator threads
        (
            {
                "realtime_vcpus": [0, 1],
                "cpu_sets": [{"id": 0, "vcpus": [0, 1], "memory_mib": 1024}],
            },
            "hw:cpu_realtime_mask",
            "0-1",
            "every vCPU is realtime",
        ),
        # per-cpu-set thread policy override
        (
            {"cpu_sets": [{"id": 0, "vcpus": [0], "memory_mib": 1024, "thread_policy": "prefer"}]},
            "hw:cpu_thread_policy",
            "isolate",
            "per-cpu-set thread policies",
        ),
        # PCI device of a class, tied to a cpu-set
        (
            {
                "cpu_sets": [{"id": 0, "vcpus": [0], "memory_mib": 1024}],
                "pci_devices": [{"class": "crypto", "count": 2, "cpu_set": 0}],
            },
            "pci_passthrough:alias",
            "crypto:2",
            "define the aliases",
        ),
        # a floating VM that must not be oversubscribed
        (
            {"vcpus": 2, "memory_mib": 512},
            "hw:cpu_policy",
            "shared",
            "cpu_allocation_ratio",
        ),
        # instance limits
        (
            {"vcpus": 1, "memory_mib": 512, "impact": {"max_instances_per_host": 1}},
            "hw:cpu_policy",
            "shared",
            "server group",
        ),
    ],
)
def test_mapping_and_warnings(vm: dict[str, Any], spec: str, value: str, warning: str) -> None:
    descriptor = _vm(**vm)
    config = _config(vcpus=descriptor.total_vcpus, memory_mib=descriptor.total_memory_mib)
    result = render_openstack(config, descriptor)
    assert _specs(result.text)[spec] == value
    assert any(warning in w for w in result.warnings), result.warnings


@pytest.mark.parametrize(
    ("flag", "trait"),
    [
        ("aes", "HW_CPU_X86_AESNI"),
        ("sse4_2", "HW_CPU_X86_SSE42"),
        ("avx512f", "HW_CPU_X86_AVX512F"),
        ("AVX2", "HW_CPU_X86_AVX2"),
        ("pclmulqdq", "HW_CPU_X86_CLMUL"),
        ("no-such-flag", None),
    ],
)
def test_cpu_flag_traits(flag: str, trait: str | None) -> None:
    assert cpu_flag_trait(flag) == trait


def test_unknown_flag_warns() -> None:
    descriptor = _vm(vcpus=1, memory_mib=512, processor={"required_flags": ["zzz"]})
    result = render_openstack(_config(vcpus=1, memory_mib=512), descriptor)
    assert any("'zzz'" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("kib", "text"), [(2048, "2MB"), (1048576, "1GB"), (64, "64KB"), (16 * 1024 * 1024, "16GB")]
)
def test_page_size_names(kib: int, text: str) -> None:
    assert nova_page_size(kib) == text


def test_pure() -> None:
    config, vm = load_config("figure8"), load_vm("figure8")
    assert vm is not None
    before = (config.model_dump(), vm.model_dump())
    first = render_openstack(config, vm)
    assert (config.model_dump(), vm.model_dump()) == before
    assert render_openstack(config, vm) == first
