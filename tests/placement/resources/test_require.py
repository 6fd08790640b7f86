"""Thread policy `require` (Nova's meaning): vCPUs on sibling threads of whole cores, two pairs to
a core of four threads, an odd vCPU's siblings left free (for the VM's emulator PU or others)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import NodeSpec, cpu_set, host, vm
from checker import violations
from test_placement_bugs import smt4_host

import nfvplace
from nfvplace.claims import claim, release
from nfvplace.models import VmDescriptor


def _require(vcpus: int, **extra: Any) -> VmDescriptor:
    return vm(cpu_sets=[cpu_set(0, vcpus, pairs=False, thread_policy="require")], **extra)


@pytest.mark.parametrize(
    ("vcpus", "cores", "fits"),
    [
        (8, 2, True),  # two pairs to a core of four threads: 2 cores
        (7, 2, True),  # 3 pairs and the odd vCPU beside a pair
        (9, 2, False),  # 9 vCPUs need 3 cores
        (9, 3, True),
    ],
)
def test_require_packs_pairs_on_smt4_cores(vcpus: int, cores: int, fits: bool) -> None:
    h = smt4_host(cores)
    v = _require(vcpus)
    result = nfvplace.place([h], v)
    assert result.ok is fits, result.diagnosis
    if fits:
        config = result.configuration
        cores_used = {h.cpus[pu].core for pu in config.cpu_sets[0].vcpu_pins.values()}
        assert len(cores_used) == -(-vcpus // 4)
        assert violations([h], v, result.configurations) == []
        assert release(claim(h, config), config) == h


def test_the_odd_vcpu_leaves_its_sibling_free_for_the_vms_emulator_pu() -> None:
    h = host(nodes=[NodeSpec(cores=2), NodeSpec(cores=0)])  # SMT2: 2 cores, 4 threads
    v = _require(3, emulator_threads="isolate")  # a pair, the odd vCPU and the emulator: 2 cores
    result = nfvplace.place([h], v)
    assert result.ok, result.diagnosis
    config = result.configuration
    placement = config.cpu_sets[0]
    odd = placement.vcpu_pins[2]
    (emulator,) = config.emulator_pins
    assert h.cpus[emulator].core == h.cpus[odd].core
    assert placement.reserved_siblings == ()
    assert violations([h], v, result.configurations) == []


def test_the_odd_vcpus_sibling_is_free_for_other_vms() -> None:
    h = host(nodes=[NodeSpec(cores=1), NodeSpec(cores=0)])  # one core of two threads
    first = nfvplace.place([h], _require(1))
    assert first.ok
    after = first.hosts[h.id]
    second = nfvplace.place([after], vm("p", vcpus=1, memory_mib=256))  # prefer by default
    assert second.ok, second.diagnosis
