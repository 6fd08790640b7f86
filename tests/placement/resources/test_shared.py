"""The shared-CPU kind: floating vCPUs of oversubscribed plain VMs over the shared PUs of one node,
within each PU's ratio, never overcommitting a VM against itself; claimed and released as usage."""

from __future__ import annotations

from fractions import Fraction

import pytest
from builders import NodeSpec, host, vm
from hypothesis import given, settings
from hypothesis import strategies as st

import nfvplace
from bench.hostgen import make_fleet
from nfvplace.claims import claim, release
from nfvplace.exact import rational
from nfvplace.models.chd import CpuState, NumaNode
from nfvplace.placement.resources import shared_pool
from nfvplace.placement.resources.shared_pool import shared_pus, shared_pus_again


def test_oversubscribed_cloud_vm_uses_shared_pus_within_ratio() -> None:
    h = host(shared={4: (4.0, 0.5), 5: (4.0, 0.75)})
    v = vm(vcpus=2, memory_mib=1024, cpu_oversubscription=True)
    result = nfvplace.place([h], v)
    config = result.configuration
    assert config.shared is not None
    assert config.cpu_sets == ()
    assert config.shared.cpus == (4, 5)  # one PU per vCPU at least
    updated = result.hosts[h.id]
    for cpu in updated.cpus:
        if cpu.id in config.shared.cpus:
            assert (cpu.usage_ratio or 0) <= 1.0


@pytest.mark.parametrize(
    ("vcpus", "reason", "numbers"),
    [
        # PU 5 has room for 0.4 vCPUs: two vCPUs never share PU 4 (no self-overcommit)
        (2, "shared_cpu", None),
        # two shared PUs for three vCPUs: the VM would overcommit against itself
        (3, "shared_pus", (2, 3)),
    ],
)
def test_a_shared_vm_never_overcommits_against_itself(
    vcpus: int, reason: str, numbers: tuple[int, int] | None
) -> None:
    h = host(shared={4: (4.0, 0.5), 5: (4.0, 0.9)})
    result = nfvplace.place([h], vm(vcpus=vcpus, memory_mib=1024, cpu_oversubscription=True))
    assert not result.ok
    assert result.diagnosis is not None
    rejection = result.diagnosis.rejections[0]
    assert rejection.reason == reason
    if numbers is not None:
        assert (rejection.available, rejection.requested) == numbers


def test_pinned_vm_never_gets_shared_pus() -> None:
    h = host(nodes=[NodeSpec(cores=1), NodeSpec(cores=0)], shared={0: (4.0, 0.0), 1: (4.0, 0.0)})
    result = nfvplace.place([h], vm(vcpus=1, memory_mib=512))
    assert not result.ok


def test_release_gives_the_shared_usage_back() -> None:
    h = host(shared={4: (4.0, 0.5), 5: (4.0, 0.75)})
    result = nfvplace.place([h], vm(vcpus=2, memory_mib=1024, cpu_oversubscription=True))
    config = result.configuration
    assert config.shared is not None
    claimed = claim(h, config)
    usage = {c.id: c.usage_ratio for c in claimed.cpus if c.id in config.shared.cpus}
    assert usage != {c.id: c.usage_ratio for c in h.cpus if c.id in config.shared.cpus}
    assert release(claimed, config) == h


_NODES = [node for h in make_fleet(12, seed=5) for node in h.numa_nodes]
_STATES = st.sampled_from(
    [
        {"state": CpuState.dedicated, "owner": "vm"},
        {"state": CpuState.free, "owner": None},
        {"state": CpuState.free, "oversubscription_ratio": 4.0, "usage_ratio": 0.0},
        {"state": CpuState.shared, "oversubscription_ratio": 2.0, "usage_ratio": 0.25},
        {"state": CpuState.shared, "oversubscription_ratio": 4.0, "usage_ratio": 0.8},
        {"eligible": False},
    ]
)


def _changed(node: NumaNode, changes: dict[int, dict[str, object]]) -> NumaNode:
    cpus = tuple(
        cpu.model_copy(update=changes[k]) if k in changes else cpu
        for k, cpu in enumerate(node.cpus)
    )
    return node.model_copy(update={"cpus": cpus})


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(_NODES),
    st.dictionaries(st.integers(0, 400), _STATES, max_size=6),
    st.dictionaries(st.integers(0, 400), _STATES, max_size=4),
)
def test_a_nodes_shared_pool_read_again_after_a_change_is_the_pool_read_afresh(
    node: NumaNode, first: dict[int, dict[str, object]], then: dict[int, dict[str, object]]
) -> None:
    """`shared_pus_again` keeps the entries of the PUs that are the same objects and reads the
    others: the same pool as reading the new node afresh (and the very pool before when none of
    the PUs that changed is or was in it)."""
    old = _changed(node, first)
    new = _changed(old, then)
    before = shared_pus(old)
    again = shared_pus_again(new, old, before)
    assert again == shared_pus(new)
    if all(
        not any(p.pu == new.cpus[k].id for p in before + again) for k in then if k < len(new.cpus)
    ):
        assert again is before


def _afresh(node: NumaNode) -> list[tuple[object, ...]]:
    """The pool as worked out before shared PUs were kept by value: each PU in fractions anew."""
    return [
        (cpu.id, ratio, usage, max((1 - usage) * ratio, Fraction(0)))
        for cpu in node.cpus
        if cpu.eligible
        and (
            cpu.state is CpuState.shared
            or (cpu.state is CpuState.free and bool(cpu.oversubscription_ratio))
        )
        for ratio, usage in [(rational(cpu.oversubscription_ratio) or 1, rational(cpu.usage_ratio))]
    ]


_RATIOS = st.one_of(st.none(), st.sampled_from([0.0, 1, 1.0, 2.0, 4.0, 16.0]), st.floats(0, 64))
_USAGES = st.one_of(st.none(), st.sampled_from([0, 0.0, 0.5, 1.0]), st.floats(0, 1))


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(_NODES),
    st.dictionaries(
        st.integers(0, 400),
        st.fixed_dictionaries(
            {
                "state": st.sampled_from([CpuState.shared, CpuState.free, CpuState.dedicated]),
                "eligible": st.booleans(),
                "oversubscription_ratio": _RATIOS,
                "usage_ratio": _USAGES,
            }
        ),
        max_size=8,
    ),
)
def test_a_pool_of_kept_shared_pus_is_the_pool_worked_out_afresh(
    node: NumaNode, changes: dict[int, dict[str, object]]
) -> None:
    """Shared PUs are kept by (PU, ratio, usage): every pool read gives the PUs, fractions, spare
    vCPUs and room that working each PU out anew gives (the cache starts empty and warm)."""
    changed = _changed(node, changes)
    for cleared in (True, False):
        if cleared:
            shared_pool._shared_pu_of.cache_clear()
        pool = shared_pus(changed)
        assert [(p.pu, p.ratio, p.usage, p.spare_vcpus) for p in pool] == _afresh(changed)
        assert [p.has_room for p in pool] == [p.spare_vcpus > 0 for p in pool]
