"""The Nova writer (`convert --to nova`): what each VM asks is written as Nova applies it, or
named in a finding; read back, it is what Nova reads (tests/integrations/test_nova_flavors.py
runs the same flavors through Nova's own code)."""

from __future__ import annotations

from typing import Any

import pytest

from nfvplace.dialects.nova_traits import mask_text, nova_cpu_mask
from nfvplace.dialects.writers import to_nova
from nfvplace.integrations.nova.reach import floats_host_wide, host_wide
from nfvplace.models import VmDescriptor


def _vm(**fields: Any) -> VmDescriptor:
    return VmDescriptor.model_validate({"schema": "nfvplace/vmd/v1", "name": "v", **fields})


def _pinned(vcpus: int = 6, **cpu_set: Any) -> dict[str, Any]:
    return {"id": 0, "vcpus": list(range(vcpus)), "memory_mib": 4096, **cpu_set}


def _write(vm: VmDescriptor) -> tuple[dict[str, Any], dict[str, str]]:
    data, notes = to_nova(vm)
    return data["flavor"], {"/".join(map(str, n.path)): n.message for n in notes}


@pytest.mark.parametrize(
    ("vcpus", "realtime", "mask"),
    [
        (6, [2, 3, 4, 5], "^0-1"),  # not `^0,1`, which Nova reads as realtime 1-5
        (8, [2, 3, 5, 6, 7], "^0-1,^4"),
        (4, [1, 2, 3], "^0"),
    ],
)
def test_the_realtime_mask_is_written_as_nova_reads_it(
    vcpus: int, realtime: list[int], mask: str
) -> None:
    flavor, _ = _write(_vm(realtime_vcpus=realtime, cpu_sets=[_pinned(vcpus)]))
    assert flavor["extra_specs"]["hw:cpu_realtime_mask"] == mask
    assert nova_cpu_mask(mask, vcpus, "mask", ()) == realtime
    assert mask_text([v for v in range(vcpus) if v not in realtime]) == mask


def test_a_cpu_sets_own_thread_policy_is_the_flavors() -> None:
    """openmano `threads` (prefer) under the VM-wide default isolate stays prefer."""
    flavor, notes = _write(_vm(cpu_sets=[_pinned(2, thread_policy="prefer")]))
    assert flavor["extra_specs"]["hw:cpu_thread_policy"] == "prefer"
    assert "cpu_sets/0/thread_policy" not in notes


def test_differing_thread_policies_write_the_strictest_with_a_finding() -> None:
    sets = [_pinned(2, thread_policy="prefer"), {**_pinned(2), "id": 1, "vcpus": [2, 3]}]
    flavor, notes = _write(_vm(cpu_sets=sets))
    assert flavor["extra_specs"]["hw:cpu_thread_policy"] == "isolate"
    assert "strictest" in notes["cpu_sets"]
    assert "HW_CPU_HYPERTHREADING" in notes["cpu_thread_policy"]  # isolate needs SMT off


def test_prefer_with_every_vcpu_paired_is_require_with_a_finding() -> None:
    """An OSM PREFER with paired threads: Nova pairs vCPUs only under require."""
    vm = _vm(cpu_thread_policy="prefer", cpu_sets=[_pinned(2, howtogroup=[[0, 1]])])
    flavor, notes = _write(vm)
    assert flavor["extra_specs"]["hw:cpu_thread_policy"] == "require"
    assert "'prefer' written as 'require'" in notes["cpu_thread_policy"]


def test_a_vm_that_may_not_share_pus_is_not_written_shared() -> None:
    flavor, _ = _write(_vm(vcpus=4, memory_mib=4096))
    assert flavor["extra_specs"] == {"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "prefer"}
    flavor, _ = _write(_vm(vcpus=4, memory_mib=4096, cpu_oversubscription=True))
    assert flavor["extra_specs"] == {}


def test_disks_are_whole_gib_and_a_second_disk_is_ephemeral() -> None:
    storage = [
        {"name": "root", "size_gib": 20.5},
        {"name": "data", "size_gib": 100},
        {"name": "logs", "size_gib": 5},
    ]
    flavor, notes = _write(_vm(vcpus=1, memory_mib=512, cpu_oversubscription=True, storage=storage))
    assert (flavor["disk"], flavor["OS-FLV-EXT-DATA:ephemeral"]) == (21, 100)
    assert isinstance(flavor["disk"], int)
    assert "written as 21" in notes["storage/0/size_gib"]
    assert "Cinder volume" in notes["storage/2"]
    flavor, _ = _write(_vm(vcpus=1, memory_mib=512, cpu_oversubscription=True))
    assert flavor["disk"] == 0


def test_only_traits_the_libvirt_driver_reports_are_written() -> None:
    processor = {"required_flags": ["sse4_2", "pdpe1gb", "constant_tsc", "avx512_vnni"]}
    flavor, notes = _write(_vm(processor=processor, cpu_sets=[_pinned(2)]))
    traits = {k for k in flavor["extra_specs"] if k.startswith("trait:")}
    assert traits == {"trait:HW_CPU_X86_SSE42", "trait:HW_CPU_X86_AVX512VNNI"}
    assert "['pdpe1gb', 'constant_tsc']" in notes["processor/required_flags"]


def test_cache_ways_and_the_processor_model_are_findings() -> None:
    vm = _vm(processor={"model": "Xeon"}, cpu_sets=[_pinned(2, cache_ways=4)])
    _, notes = _write(vm)
    assert "cache ways" in notes["cpu_sets/0/cache_ways"]
    assert "model" in notes["processor"]


def test_guest_node_memory_is_rounded_up_to_whole_pages_only() -> None:
    sets = [_pinned(2, memory_mib=1536, hugepages={"size": "1GiB", "count": 1})]
    flavor, notes = _write(_vm(cpu_sets=sets))
    assert flavor["extra_specs"]["hw:numa_mem.0"] == "2048"
    assert flavor["ram"] == 2048
    assert "next whole number of 1024 MiB pages" in notes["cpu_sets/0/memory_mib"]
    sets = [_pinned(2, memory_mib=10240, hugepages={"size": "1GiB", "count": 4})]
    flavor, notes = _write(_vm(cpu_sets=sets))  # 4 of 10 GiB asked: Nova backs all 10
    assert flavor["extra_specs"]["hw:numa_mem.0"] == "10240"
    assert "one page size" in notes["cpu_sets/0/hugepages"]


HOST = {
    "host": "h",
    "cells": [
        {
            "id": n,
            "cpuset": [4 * n, 4 * n + 1],
            "pcpuset": [4 * n + 2, 4 * n + 3],
            "pinned_cpus": [],
            "siblings": [],
            "memory": 4096,
            "memory_usage": 1024,
            "cpu_usage": 1,
            "mempages": [{"size_kb": 4, "total": 1048576, "used": 0, "reserved": 0}],
            "socket": 0,
        }
        for n in range(2)
    ],
    "pci_pools": [{"vendor_id": "8086", "product_id": "1", "numa_node": 1, "count": 2}],
}


@pytest.mark.parametrize(
    ("specs", "image", "wide"),
    [
        ({}, {}, True),
        ({"hw:cpu_policy": "shared"}, {}, True),
        ({"hw:numa_nodes": "1"}, {}, False),
        ({"hw:mem_page_size": "large"}, {}, False),
        ({"hw:cpu_policy": "dedicated"}, {}, False),
        ({}, {"hw_numa_nodes": 1}, False),
        ({"resources:PCPU": "2"}, {}, False),
    ],
)
def test_which_requests_float_over_the_whole_host(
    specs: dict[str, str], image: dict[str, Any], wide: bool
) -> None:
    document: dict[str, Any] = {"flavor": {"vcpus": 8, "ram": 1024, "extra_specs": specs}}
    if image:
        document["image"] = {"properties": image}
    assert floats_host_wide(document) is wide


def test_a_host_seen_whole_has_one_cell_with_everything() -> None:
    (cell,) = host_wide(HOST)["cells"]
    assert cell["cpuset"] == [0, 1, 4, 5]
    assert cell["pcpuset"] == [2, 3, 6, 7]
    assert (cell["memory"], cell["memory_usage"], cell["cpu_usage"]) == (8192, 2048, 2)
    assert cell["mempages"] == [{"size_kb": 4, "total": 2097152, "used": 0, "reserved": 0}]
    assert host_wide(HOST)["pci_pools"][0]["numa_node"] == 0


def test_the_nova_doors_host_flags_are_the_kernels_names() -> None:
    """libvirt's `cpu_info` says `sse4.2`; a VM asks `sse4_2` (/proc/cpuinfo): the door maps."""
    from nfvplace import place
    from nfvplace.integrations.nova.hosts import chd_of
    from nfvplace.models import ComputeHostDescriptor

    info = {"vendor": "Intel", "model": "Skylake", "features": ["sse4.2", "pclmuldq", "avx2"]}
    chd = chd_of({**HOST, "cpu_info": info})
    assert chd["processor"]["flags"] == ["avx2", "pclmulqdq", "sse4_2"]
    vm = _vm(vcpus=1, memory_mib=256, processor={"required_flags": ["sse4_2", "pclmulqdq"]})
    result = place([ComputeHostDescriptor.model_validate(chd)], vm)
    assert result.ok, result.diagnosis
    assert result.configuration.host == "h"


def test_an_all_realtime_vm_gets_its_emulator_threads_a_pcpu_of_their_own() -> None:
    flavor, notes = _write(_vm(realtime_vcpus=[0, 1], cpu_sets=[_pinned(2)]))
    assert flavor["extra_specs"]["hw:emulator_threads_policy"] == "isolate"
    assert "hw:cpu_realtime_mask" not in flavor["extra_specs"]
    assert "every vCPU is realtime" in notes["emulator_threads"]
