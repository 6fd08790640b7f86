"""Normalising a descriptor into counted demands."""

from __future__ import annotations

from builders import cpu_set, vm

from nfvplace.models.vmd import ThreadPolicy
from nfvplace.placement.request import build_request


def test_require_pairs_the_unpaired_vcpus() -> None:
    request = build_request(vm(cpu_sets=[cpu_set(0, 5, pairs=False)], cpu_thread_policy="require"))
    cs = request.cpu_sets[0]
    assert cs.pairs == ((0, 1), (2, 3))
    assert cs.singles == (4,)
    assert cs.policy is ThreadPolicy.isolate
    assert cs.requires_smt


def test_plain_vm_becomes_a_synthetic_prefer_cpu_set() -> None:
    request = build_request(vm(vcpus=3, memory_mib=2048))
    (cs,) = request.cpu_sets
    assert cs.synthetic
    assert cs.policy is ThreadPolicy.prefer
    assert cs.vcpus == (0, 1, 2)
    assert request.shared is None
    explicit = build_request(vm(vcpus=3, memory_mib=2048, cpu_thread_policy="isolate"))
    assert explicit.cpu_sets[0].policy is ThreadPolicy.isolate


def test_oversubscribed_plain_vm_is_a_shared_demand() -> None:
    request = build_request(vm(vcpus=4, memory_mib=2048, cpu_oversubscription=True))
    assert request.cpu_sets == ()
    assert request.shared is not None
    assert request.shared.vcpus == 4


def test_memory_split_and_interfaces() -> None:
    iface = {"name": "e", "mode": "sriov", "speed_gbps": 25, "bandwidth_gbps": 5}
    request = build_request(
        vm(
            cpu_sets=[cpu_set(0, 2, memory_mib=6144, hugepages_1g=4, interfaces=(iface,))],
            emulator_threads="isolate",
        )
    )
    cs = request.cpu_sets[0]
    assert (cs.hugepage_mib, cs.normal_mib) == (4096, 2048)
    assert request.emulator
    assert request.interfaces_of(0)[0].bandwidth_gbps == 5
