"""The free parts of floating vCPUs and of the bandwidth between cpu-sets once a claim is made,
worked out without the claimed host (`free_claimed` with `after` None, what `index/pending.py`
keeps pending): the shared pool, the CPU kind's free classes, a shared VM's memory and the NUMA
interconnect. Table-driven: each row claims one placement's configuration on its host again and
again (another instance each time) until the claim conflicts; at every step each kind's delta,
read against the descriptor first held, equals `free_of` of the host `claims.claim` gives, and
where the claim conflicts `free_pending` is None (the claim is made at once, and refused)."""

from __future__ import annotations

from typing import Any

import pytest

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.claims import ClaimConflictError, claim
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.placement.index import free_of
from nfvplace.placement.index.pending import free_pending
from nfvplace.placement.resources.base import HostFree
from nfvplace.placement.resources.cpu import CPU
from nfvplace.placement.resources.interconnect import INTERCONNECT
from nfvplace.placement.resources.memory import MEMORY
from nfvplace.placement.resources.shared import SHARED_CPUS
from nfvplace.placement.resources.stages import FreeClaimed

NEW: tuple[FreeClaimed[Any], ...] = (SHARED_CPUS, CPU, MEMORY, INTERCONNECT)


def linked(
    host: ComputeHostDescriptor, gbps: float = 1.3, used: float = 0.1
) -> ComputeHostDescriptor:
    """`host` with a link between every two of its nodes (bandwidth between cpu-sets limited)."""
    ids = [node.id for node in host.numa_nodes]
    links = [
        {"nodes": (a, b), "bandwidth_gbps": gbps, "bandwidth_used_gbps": used}
        for k, a in enumerate(ids)
        for b in ids[k + 1 :]
    ]
    return ComputeHostDescriptor.model_validate(host.model_dump() | {"interconnect": links})


def pooled(host: ComputeHostDescriptor, pus: int = 4, ratio: float = 2.0) -> ComputeHostDescriptor:
    """`host` with the last `pus` free PUs of each node given a ratio (in the node's shared pool
    while free: a floating vCPU charged on one takes it from the free classes)."""
    data = host.model_dump()
    for node in data["numa_nodes"]:
        free = [cpu for cpu in node["cpus"] if cpu["state"] == "free" and cpu["eligible"]]
        for cpu in free[-pus:]:
            cpu["oversubscription_ratio"] = ratio
    return ComputeHostDescriptor.model_validate(data)


def floating_vm(
    name: str, bandwidth_mbps: int = 0, sizes: tuple[int, ...] = (2, 1)
) -> VmDescriptor:
    """Floating cpu-sets (over the shared pools of distinct nodes), with bandwidth between the
    first two when `bandwidth_mbps`."""
    first = 0
    sets = []
    for k, n in enumerate(sizes):
        sets.append(
            {"id": k, "vcpus": list(range(first, first + n)), "memory_mib": 1024, "floating": True}
        )
        first += n
    data: dict[str, Any] = {"name": name, "cpu_oversubscription": True, "cpu_sets": sets}
    if bandwidth_mbps:
        data["cpu_set_bandwidth"] = [{"cpu_sets": [0, 1], "bandwidth_mbps": bandwidth_mbps}]
    return VmDescriptor.model_validate(data)


def _first(prefix: str, **match: Any) -> VmDescriptor:
    for vm in request_stream(80, seed=61):
        if vm.name.startswith(prefix) and all(getattr(vm, k) == v for k, v in match.items()):
            return vm
    raise AssertionError(prefix)


HOSTS = [linked(pooled(h)) for h in make_fleet(8, seed=62)]
ROWS = {
    "shared VM, oversubscribed": (
        _first("cloud", cpu_oversubscription=True),
        ("shared", "cpu", "memory"),
    ),
    "shared VM, not oversubscribed": (
        _first("cloud", cpu_oversubscription=False),
        ("cpu", "memory"),
    ),
    "floating cpu-sets": (floating_vm("fl"), ("shared", "cpu", "memory")),
    "floating cpu-sets, bandwidth between": (floating_vm("flb", 300), ("shared", "interconnect")),
    "vBRAS: pinned cpu-sets, bandwidth between": (
        _first("vbras"),
        ("cpu", "memory", "interconnect"),
    ),
}


def _placed(vm: VmDescriptor) -> tuple[ComputeHostDescriptor, VmConfiguration]:
    result = nfvplace.place(FleetIndex(HOSTS), vm)
    assert result.ok, result.diagnosis
    config = result.configuration
    return next(h for h in HOSTS if h.id == config.host), config


def _check_step(
    base: ComputeHostDescriptor,
    host: ComputeHostDescriptor,
    free: HostFree,
    config: VmConfiguration,
) -> HostFree | None:
    """One claim of `config` on `host` (held as `base`, free resources `free`): the host claimed,
    or None when the claim conflicts."""
    whole = free_pending(base, free, config)
    try:
        after = claim(host, config)
    except ClaimConflictError:
        assert whole is None
        return None
    want = free_of(after)
    for kind in NEW:
        got = kind.free_claimed(base, free.parts[kind.name], config, None)
        assert got is None or got == want.parts[kind.name], kind.name
    assert whole is None or whole == want
    return want if whole is None else whole


@pytest.mark.parametrize("row", ROWS.values(), ids=list(ROWS))
def test_each_delta_equals_the_host_claimed_until_the_claim_conflicts(
    row: tuple[VmDescriptor, tuple[str, ...]],
) -> None:
    vm, kinds = row
    base, config = _placed(vm)
    touched = {"shared": bool(config.floating_cpus), "interconnect": bool(config.cpu_set_links)}
    assert all(touched.get(name, True) for name in kinds), config
    first = free_of(base)
    for kind in NEW:
        if kind.name in kinds:  # the kinds this row is about tell without the claimed host
            assert kind.free_claimed(base, first.parts[kind.name], config, None) is not None
    host, free = base, first
    for k in range(60):
        again = config.model_copy(update={"instance": f"again-{k}"})
        step = _check_step(base, host, free, again)
        if step is None:
            break
        host, free = claim(host, again), step
    else:
        pytest.fail("the claim never conflicted")


def test_a_shared_charge_beyond_the_ratio_is_not_kept_pending() -> None:
    """The pool's room taken by the claims kept pending: the claim that would overcommit a PU is
    None for the shared kind (and so for `free_pending`)."""
    base, config = _placed(floating_vm("fl-full"))
    host, free, steps = base, free_of(base), 0
    while True:
        again = config.model_copy(update={"instance": f"i{steps}"})
        nxt = free_pending(base, free, again)
        if nxt is None:
            assert SHARED_CPUS.free_claimed(base, free.parts["shared"], again, None) is None
            with pytest.raises(ClaimConflictError):
                claim(host, again)
            break
        host, free, steps = claim(host, again), nxt, steps + 1
    assert steps >= 1


@pytest.mark.parametrize(
    ("used", "mbps", "pending"),
    [(0.1, 300, True), (0.0, 0, True), (9_999_999.9, 500, False)],
    ids=["some used", "no bandwidth", "beyond what a descriptor holds"],
)
def test_the_interconnect_delta(used: float, mbps: int, pending: bool) -> None:
    vm = floating_vm("flb-t", mbps or 1)
    base, config = _placed(vm)
    base = linked(base, gbps=9_999_999.0 if used > 1 else 1.3, used=used)
    if not mbps:
        config = config.model_copy(update={"cpu_set_links": ()})
    got = INTERCONNECT.free_claimed(base, free_of(base).parts["interconnect"], config, None)
    assert (got is not None) is pending
    if got is not None:
        assert got == free_of(claim(base, config)).parts["interconnect"]


def test_a_pair_of_nodes_described_twice_is_claimed_at_once() -> None:
    base, config = _placed(floating_vm("flb-2", 200))
    twice = ComputeHostDescriptor.model_validate(
        base.model_dump() | {"interconnect": [link.model_dump() for link in base.interconnect] * 2}
    )
    free = free_of(twice).parts["interconnect"]
    assert INTERCONNECT.free_claimed(twice, free, config, None) is None
