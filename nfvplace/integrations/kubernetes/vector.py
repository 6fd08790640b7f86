"""`decide` for many nodes at once, over the columns of `columns.NodeTable`: the same verdict, score
and reason as `decide.decide` gives each node (a property test compares them node by node), for
the cases it can state in closed form; the rest (`decided` False) go to `decide`.

Decided here, on rows that are `exact` (`columns.py`): a node's own row, or a copy of it with the
pods assumed on the node taken (`taken.TakenTable`):

- a pod that pins nothing the kubelet aligns (every policy and scope): admitted, nothing taken;
- a pod whose one app container is the only one that asks the kubelet's managers for anything
  (exclusive CPUs, memory and hugepages of the Static memory manager, devices):
  - `single-numa-node`, either scope: each provider's preferred single-NUMA-node hints are the
    NUMA nodes with enough free of its resource, when some NUMA node could hold the request at
    all (or the node has one NUMA node); the merged hint is the lowest NUMA node every provider
    allows; a memory provider with no hint at all states no preference (and the memory
    manager's allocation then fails);
  - `none` (when the memory manager has nothing to place): enough free CPUs and devices on the
    node, taken as `allocate.py` takes them.

`best-effort` and `restricted` pods that ask for something, pods with several such containers,
and init containers that ask, go to `decide`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...dialects.kubernetes import APP, Pod
from .admission import Demand, container_demand, pod_demand, topology_error
from .columns import MAX_NUMA, POLICIES, SCOPES, Bools, Ints, NodeTable, Pools
from .decide import MAX_SCORE
from .hints import NONE, SINGLE_NUMA_NODE

NONE_CODE, SINGLE_CODE = POLICIES.index(NONE), POLICIES.index(SINGLE_NUMA_NODE)
POD_SCOPE = SCOPES.index("pod")

# Every set of NUMA node positions, as a 0/1 matrix (position x mask) and its node count.
_MASKS = np.array(
    [[(m >> j) & 1 for m in range(1, 1 << MAX_NUMA)] for j in range(MAX_NUMA)], np.int64
)
_MASK_SIZE = _MASKS.sum(axis=0)
_MASK_TOP = np.array([m.bit_length() for m in range(1, 1 << MAX_NUMA)], np.int64)


@dataclass(frozen=True)
class PodAsk:
    """What a pod asks the kubelet's managers for, when one app container asks it all: its name
    (allocation errors name it) and its demand as each scope sees it."""

    container: str
    demand: Demand  # the container's (container scope)
    pod: Demand | None  # the pod's (pod scope), when it is the same request; None: not decided

    @property
    def empty(self) -> bool:
        return self.demand.empty


def unit_of(pod: Pod) -> PodAsk | None:
    """The pod's one asking container, or None when the vector decision does not decide it."""
    asking = [(c, d) for c in pod.containers if not (d := container_demand(pod, c)).empty]
    if not asking:
        return PodAsk("", Demand(pod.name, 0, {}, {}), Demand(pod.name, 0, {}, {}))
    if len(asking) != 1 or asking[0][0].kind != APP:
        return None
    container, demand = asking[0]
    whole = pod_demand(pod)
    same = (whole.cpus, dict(whole.memory), dict(whole.devices)) == (
        demand.cpus,
        dict(demand.memory),
        dict(demand.devices),
    )
    return PodAsk(container.name, demand, whole if same else None)


@dataclass
class Answers:
    """The vector decision for some rows: which it decided, and for those the verdict, the score
    (0 where refused) and the reason ("" where admitted)."""

    decided: Bools
    fits: Bools
    score: Ints
    reasons: list[str]


def decide_rows(
    pod: Pod, unit: PodAsk | None, table: NodeTable, rows: Ints, policy: str
) -> Answers:
    """The decision on each row of `rows` (of a node's counts as the table holds them)."""
    n = len(rows)
    answers = Answers(np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, np.int64), [""] * n)
    if unit is None or n == 0:
        return answers
    batch = Batch(table, rows)
    decided = table.exact[rows].copy()
    if unit.empty:
        answers.decided, answers.fits = decided, decided.copy()
        answers.score = np.where(
            decided, batch.score(policy, unit.demand, np.zeros_like(batch.k)), 0
        )
        return answers
    if unit.pod is None:
        decided &= table.scope[rows] != POD_SCOPE
    demand = unit.demand
    mm_memory = table.memory_manager[rows] & bool(demand.memory)
    single = table.policy[rows] == SINGLE_CODE
    decided &= single | ((table.policy[rows] == NONE_CODE) & ~mm_memory)
    memory = _memory_ok(table, rows, demand) if demand.memory else np.ones(n, bool)
    decided &= ~mm_memory | memory
    for resource in demand.devices:
        pools = table.devices.get(resource)
        if pools is not None:  # listed with nothing to give: an allocation error, to `decide`
            decided &= ~pools.listed[rows] | (pools.allocatable[rows].sum(axis=1) > 0)
    for code, solve in ((SINGLE_CODE, _single_numa), (NONE_CODE, _none)):
        chosen = decided & (table.policy[rows] == code)
        if chosen.any():
            part = Batch(table, rows[chosen])
            fits, score, reasons = solve(part, unit, policy)
            answers.fits[chosen], answers.score[chosen] = fits, score
            for i, reason in zip(np.flatnonzero(chosen).tolist(), reasons, strict=True):
                answers.reasons[i] = reason
    answers.decided = decided
    return answers


def _memory_ok(table: NodeTable, rows: Ints, demand: Demand) -> Bools:
    """Rows whose every NUMA node has a pool of each memory type the pod asks for."""
    ok = np.full(len(rows), "memory" in demand.memory and all(demand.memory.values()))
    valid = Batch.valid_of(table.numa[rows])
    for resource in demand.memory:
        pools = table.memory.get(resource)
        if pools is None:
            return np.zeros(len(rows), bool)
        ok &= (pools.present[rows] | ~valid).all(axis=1)
    return ok


class Batch:
    """The columns of some rows, gathered."""

    def __init__(self, table: NodeTable, rows: Ints) -> None:
        self.table, self.rows = table, rows
        self.k = table.numa[rows]
        self.valid = self.valid_of(self.k)
        self.cpu_total = table.cpu_total[rows]
        self.cpu_free = table.cpu.free[rows]
        self.cpu_allocatable = table.cpu.allocatable[rows]
        self.memory_manager = table.memory_manager[rows]
        self.memory_used = table.memory_used[rows]

    @staticmethod
    def valid_of(k: Ints) -> Bools:
        return np.arange(MAX_NUMA)[None, :] < k[:, None]

    def pools(self, kind: dict[str, Pools], resource: str) -> tuple[Ints, Ints, Bools]:
        found = kind.get(resource)
        if found is None:
            zeros = np.zeros((len(self.rows), MAX_NUMA), np.int64)
            return zeros, zeros, zeros.astype(bool)
        r = self.rows
        return found.allocatable[r], found.free[r], found.present[r]

    def score(self, policy: str, demand: Demand, at: Ints) -> Ints:
        """`decide.score` of each row once `demand` is taken: its CPUs per NUMA position `at`
        (an (n, MAX_NUMA) array, or a position per row), memory and devices as wholes."""
        taken = at if at.ndim == 2 else _at(at, demand.cpus, len(self.rows))
        if policy == "least-fragmentation":
            touched = np.where((taken > 0).any(axis=1)[:, None], taken > 0, self.valid)
            total = (self.cpu_allocatable * touched).sum(axis=1)
            free = (self.cpu_free * touched).sum(axis=1) - taken.sum(axis=1)
            measure = _share(total - free, total)
        else:
            used = self._mean_used(demand, taken)
            measure = used if policy == "pack" else 1.0 - used
        return (1 + np.rint(measure * (MAX_SCORE - 1))).astype(np.int64)

    def _mean_used(self, demand: Demand, taken: Ints) -> np.ndarray:
        """The mean share in use of the CPUs and of each other resource taken, summed in the
        node's own order as Python's `sum` does (Neumaier)."""
        cpu = _after(self.cpu_allocatable, self.cpu_free, taken.sum(axis=1))
        out = np.zeros(len(self.rows))
        orders = self.table.order[self.rows]
        for order in np.unique(orders).tolist():
            memory, devices = self.table.orders[order]
            shares = [cpu]
            if demand.memory and "memory" in memory:
                for resource in memory:
                    if demand.memory.get(resource):
                        allocatable, free, _ = self.pools(self.table.memory, resource)
                        shares.append(_after(allocatable, free, demand.memory[resource]))
            for resource in devices:
                if demand.devices.get(resource):
                    allocatable, free, _ = self.pools(self.table.devices, resource)
                    shares.append(_after(allocatable, free, demand.devices[resource]))
            mine = orders == order
            out[mine] = _neumaier(shares)[mine] / len(shares)
        return out


def _at(position: Ints, amount: int, n: int) -> Ints:
    taken = np.zeros((n, MAX_NUMA), np.int64)
    if amount:
        taken[np.arange(n), position] = amount
    return taken


def _share(used: Ints, total: Ints) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, used / np.where(total > 0, total, 1), 0.0)


def _after(allocatable: Ints, free: Ints, taken: Ints | int) -> np.ndarray:
    total = allocatable.sum(axis=1)
    return _share(total - (free.sum(axis=1) - taken), total)


def _neumaier(shares: Sequence[np.ndarray]) -> np.ndarray:
    """Python 3.12's `sum` of floats, element-wise."""
    total = np.zeros_like(shares[0])
    carry = np.zeros_like(shares[0])
    for x in shares:
        t = total + x
        carry += np.where(np.abs(total) >= np.abs(x), (total - t) + x, (x - t) + total)
        total = t
    out: np.ndarray = total + carry
    return out


# --- single-numa-node -----------------------------------------------------------------------------


def _single_numa(batch: Batch, unit: PodAsk, policy: str) -> tuple[Bools, Ints, list[str]]:
    demand, n = unit.demand, len(batch.rows)
    one = batch.k == 1
    allowed = batch.valid.copy()
    constrained = np.zeros(n, bool)
    if demand.cpus:
        could = one | (batch.valid & (batch.cpu_total >= demand.cpus)).any(axis=1)
        allowed &= could[:, None] & (batch.cpu_free >= demand.cpus)
        constrained[:] = True
    memory_fails = np.zeros(n, bool)
    if demand.memory:
        mm = batch.memory_manager
        could, hint, none_at_all = _memory_hints(batch, demand)
        prefers = mm & ~none_at_all
        allowed &= np.where(prefers[:, None], could[:, None] & hint, True)
        constrained |= prefers
        memory_fails = mm & none_at_all
    for resource, want in demand.devices.items():
        allocatable, free, present = batch.pools(batch.table.devices, resource)
        counted = present.any(axis=1)
        could = one | (allocatable >= want).any(axis=1)
        allowed &= np.where(counted[:, None], could[:, None] & (free >= want), True)
        constrained |= counted
    fits = allowed.any(axis=1) | ~constrained
    position = np.argmax(allowed, axis=1)
    hint_none = one | ~constrained
    reasons = [""] * n
    failed = fits & memory_fails
    for i in np.flatnonzero(~fits | failed).tolist():
        reasons[i] = _refusal(batch, i, unit, hint_none[i], bool(failed[i]))
    fits &= ~failed
    score = np.where(fits, batch.score(policy, demand, position), 0)
    return fits, score, reasons


def _memory_hints(batch: Batch, demand: Demand) -> tuple[Bools, Bools, Bools]:
    """Per row: whether one NUMA node could hold the memory asked (or the node has one), which
    NUMA nodes have it free, and whether no set of NUMA nodes has it free (no hint at all)."""
    could_at = batch.valid.copy()
    hint = batch.valid.copy()
    for resource, want in demand.memory.items():
        allocatable, free, _ = batch.pools(batch.table.memory, resource)
        could_at &= allocatable >= want
        hint &= free >= want
    could = (batch.k == 1) | could_at.any(axis=1)
    none_at_all = ~hint.any(axis=1)
    wider = np.flatnonzero(none_at_all & (batch.k > 1))
    if len(wider):  # no NUMA node alone: does a set of them (whose memory is unused) have it?
        k = batch.k[wider]
        masks = _MASKS[:, : (1 << int(k.max())) - 1]
        size, top = _MASK_SIZE[: masks.shape[1]], _MASK_TOP[: masks.shape[1]]
        unused = (batch.memory_used[wider].astype(np.int64) @ masks) == 0
        found = (top[None, :] <= k[:, None]) & ((size == 1)[None, :] | unused)
        for resource, want in demand.memory.items():
            _, free, _ = batch.pools(batch.table.memory, resource)
            found &= free[wider] @ masks >= want
        none_at_all[wider] = ~found.any(axis=1)
    return could, hint, none_at_all


def _refusal(batch: Batch, i: int, unit: PodAsk, hint_none: bool, memory: bool) -> str:
    row = int(batch.rows[i])
    state = batch.table.state_of(row)
    if memory:
        why = (
            "failed to get the default NUMA affinity, no NUMA nodes with enough memory is available"
            if hint_none
            else "failed to find NUMA nodes to extend the current topology hint"
        )
        return f"nfvplace: UnexpectedAdmissionError: container {unit.container!r}: {why}"
    pod_scope = batch.table.scope[row] == POD_SCOPE
    demand = unit.pod if pod_scope and unit.pod is not None else unit.demand
    return f"nfvplace: {topology_error(batch.table.managers[row], demand, state)}"


# --- none -----------------------------------------------------------------------------------------


def _none(batch: Batch, unit: PodAsk, policy: str) -> tuple[Bools, Ints, list[str]]:
    demand, n = unit.demand, len(batch.rows)
    reasons = [""] * n
    fits = np.ones(n, bool)
    prefix = f"nfvplace: UnexpectedAdmissionError: container {unit.container!r}: "
    if demand.cpus:
        available = batch.cpu_free.sum(axis=1)
        for i in np.flatnonzero(available < demand.cpus).tolist():
            reasons[i] = (
                f"{prefix}not enough cpus available to satisfy request: "
                f"requested={demand.cpus}, available={available[i]}"
            )
        fits &= available >= demand.cpus
    for resource, want in demand.devices.items():
        _, free, present = batch.pools(batch.table.devices, resource)
        available = free.sum(axis=1)
        short = fits & present.any(axis=1) & (available < want)
        for i in np.flatnonzero(short).tolist():
            reasons[i] = (
                f"{prefix}requested number of devices unavailable for {resource}. "
                f"Requested: {want}, Available: {available[i]}"
            )
        fits &= ~short
    taken = _packed(batch.cpu_free, batch.cpu_total, demand.cpus)
    score = np.where(fits, batch.score(policy, demand, taken), 0)
    return fits, score, reasons


def _packed(available: Ints, totals: Ints, need: int) -> Ints:
    """`allocate._packed` per row: whole free NUMA nodes first, then the fewest free first."""
    n = len(available)
    taken = np.zeros_like(available)
    left_need = np.full(n, need, np.int64)
    rows = np.arange(n)
    order = np.argsort(available, axis=1, kind="stable")
    for j in range(MAX_NUMA):
        at = order[:, j]
        have, whole = available[rows, at], totals[rows, at]
        take = (left_need > 0) & (have > 0) & (have == whole) & (have <= left_need)
        taken[rows, at] += np.where(take, have, 0)
        left_need -= np.where(take, have, 0)
    left = available - taken
    order = np.argsort(left, axis=1, kind="stable")
    for j in range(MAX_NUMA):
        at = order[:, j]
        step = np.minimum(left_need, left[rows, at])
        taken[rows, at] += step
        left_need -= step
    return taken
