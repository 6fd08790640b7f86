"""Filter's and prioritize's answer for every named node of a call, from one decision per node:

- a node with a NodeResourceTopology and no pod assumed on it: its row of the columns
  (`columns.py`), decided with the others at once by `vector.decide_rows` where it can, by
  `decide` where it cannot; the answers are kept per (pod shape, policy) and row stamp, so a
  burst of equal pods over unchanged nodes is decided once;
- a node with pods assumed on it (bound, not yet in its object): its row with what they take
  taken (`taken.TakenTable`, a copy for the call), decided with the others of the call at once
  by `vector.decide_rows` where it can, by `decide` with them counted where it cannot (and where
  the node's row alone was let through unchecked); these answers are not kept (the pods differ
  from call to call), `decide`'s are (per node and pods assumed);
- a node whose row was written since the call whose decisions a prioritize reuses (`Seen`):
  `decide`, on the row as that call had it;
- a node with no object: `decide` once for all of them (the answer names no node).

`NFVPLACE_K8S_SCALAR=1` in the environment turns the columns' decision off (every node is then
decided by `decide`, one by one): the baseline of `bench/bench_k8s.py`, and a way to rule the
vector decision out when in doubt.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...dialects.kubernetes import Pod
from ...store import Store
from .columns import Bools, Ints, NodeSource, NodeTable
from .decide import NodeDecision, NodeView, decide, pod_shape
from .state import Consumption
from .taken import TakenTable
from .vector import decide_rows, unit_of

log = logging.getLogger(__name__)

SCALAR = os.environ.get("NFVPLACE_K8S_SCALAR") == "1"

Assumed = Mapping[str, tuple[tuple[str, Consumption], ...]]
"""Node -> the pods assumed there (uid, what it takes), oldest first."""


@dataclass
class Verdicts:
    """Each named node's decision, in the call's order, as columns."""

    names: Sequence[str]
    fits: Bools
    score: Ints  # 0 where refused
    reasons: list[str]  # "" where admitted (or why it was let through unchecked)
    resolvable: Bools

    @classmethod
    def of(cls, decisions: Sequence[NodeDecision]) -> Verdicts:
        return cls(
            [d.node for d in decisions],
            np.array([d.fits for d in decisions], bool),
            np.array([d.score if d.fits else 0 for d in decisions], np.int64),
            [d.reason for d in decisions],
            np.array([d.resolvable for d in decisions], bool),
        )


@dataclass
class _Kept:
    """A (pod shape, policy)'s answers per row, valid while the row's stamp is `stamp`."""

    stamp: Ints
    fits: Bools
    score: Ints
    reasons: list[str]

    @classmethod
    def sized(cls, capacity: int) -> _Kept:
        n = capacity
        return cls(np.zeros(n, np.int64), np.zeros(n, bool), np.zeros(n, np.int64), [""] * n)

    def grown(self, capacity: int) -> _Kept:
        out = _Kept.sized(capacity)
        n = len(self.stamp)
        out.stamp[:n], out.fits[:n], out.score[:n] = self.stamp, self.fits, self.score
        out.reasons[:n] = self.reasons
        return out


class WorkerVerdicts:
    """One store's rows and the answers kept over them (a worker's)."""

    SHAPES = 256

    def __init__(self) -> None:
        self.nodes = NodeSource()
        self._kept: OrderedDict[Hashable, _Kept] = OrderedDict()

    def kept(self, key: Hashable, capacity: int) -> _Kept:
        found = self._kept.get(key)
        if found is None:
            found = self._kept[key] = _Kept.sized(capacity)
        elif len(found.stamp) < capacity:
            found = self._kept[key] = found.grown(capacity)
        self._kept.move_to_end(key)
        while len(self._kept) > self.SHAPES:
            self._kept.popitem(last=False)
        return found


_WORKERS: weakref.WeakKeyDictionary[Store, WorkerVerdicts] = weakref.WeakKeyDictionary()
_WORKERS_LOCK = threading.Lock()


def worker_verdicts(store: Store) -> WorkerVerdicts:
    with _WORKERS_LOCK:
        found = _WORKERS.get(store)
        if found is None:
            found = _WORKERS[store] = WorkerVerdicts()
        return found


def prime_in_background(store: Store) -> None:
    """Count every stored node into this worker's rows on a thread of its own (`NodeSource.prime`),
    before kube-scheduler's first call would."""

    def prime() -> None:
        start = time.monotonic()
        rows = worker_verdicts(store).nodes.prime(store)
        log.info("%d NodeResourceTopology nodes counted in %.1f s", rows, time.monotonic() - start)

    threading.Thread(target=prime, name="nfvplace-k8s-prime", daemon=True).start()


@dataclass(frozen=True)
class Seen:
    """What a call decided on: the pods assumed on its nodes, and the rows as they were (the
    stamp of the row written last; rows written since are read from their kept history)."""

    assumed: Assumed
    stamp: int


def verdicts(
    store: Store,
    pod: Pod,
    names: Sequence[str],
    assumed: Assumed | Seen,
    policy: str,
    pass_unregistered: bool,
) -> tuple[Verdicts, Seen]:
    """The decision for `pod` on each of `names` (module docstring), counting the pods
    `assumed`, or deciding on what an earlier call saw (`Seen`); and what this one saw."""
    worker = worker_verdicts(store)
    n = len(names)
    out = Verdicts(names, np.zeros(n, bool), np.zeros(n, np.int64), [""] * n, np.zeros(n, bool))
    shape = pod_shape(pod)
    seen = assumed if isinstance(assumed, Seen) else None
    pods = assumed.assumed if isinstance(assumed, Seen) else assumed
    with worker.nodes.lock:
        table = worker.nodes.table
        rows = worker.nodes.sync(store, names)
        plain = rows >= 0
        for i in [i for i, name in enumerate(names) if name in pods]:
            plain[i] = False
        views = _moved(table, names, rows, plain, seen, pods) if seen is not None else {}
        taken = [i for i in np.flatnonzero((rows >= 0) & ~plain).tolist() if i not in views]
        kept = worker.kept((shape, policy), table.capacity)
        wanted = np.concatenate([rows[plain], rows[taken]])
        _decide_rows(pod, shape, table, kept, np.unique(wanted), policy)
        chosen = rows[plain]
        out.fits[plain], out.score[plain] = kept.fits[chosen], kept.score[chosen]
        for i, row in zip(np.flatnonzero(plain).tolist(), chosen.tolist(), strict=True):
            out.reasons[i] = kept.reasons[row]
        if taken:
            views.update(_decide_taken(pod, table, kept, names, rows, taken, pods, policy, out))
        now = Seen(pods, table.last_stamp)
    unregistered = np.flatnonzero(rows < 0)
    if len(unregistered):
        d = decide(pod, shape, None, names[int(unregistered[0])], policy, pass_unregistered)
        out.fits[unregistered], out.score[unregistered] = d.fits, d.score if d.fits else 0
        for i in unregistered.tolist():
            out.reasons[i] = d.reason
    for i, view in views.items():
        d = decide(pod, shape, view, names[i], policy, pass_unregistered)
        out.fits[i], out.score[i] = d.fits, d.score if d.fits else 0
        out.reasons[i], out.resolvable[i] = d.reason, d.resolvable
    return out, now


def _moved(
    table: NodeTable, names: Sequence[str], rows: Ints, plain: Bools, seen: Seen, pods: Assumed
) -> dict[int, NodeView]:
    """The nodes whose row was written since `seen`, as `seen` had them (taken out of `plain`;
    a node `seen` did not have is decided as it is now)."""
    views = {}
    moved = (rows >= 0) & (table.stamp[np.where(rows >= 0, rows, 0)] > seen.stamp)
    for i in np.flatnonzero(moved).tolist():
        former = table.former(int(rows[i]), seen.stamp)
        if former is not None and former.state is not None:
            state, manager = former.state, former.manager
            views[i] = NodeView(names[i], former.generation, state, manager, pods.get(names[i], ()))
            plain[i] = False
    return views


def _decide_taken(
    pod: Pod,
    table: NodeTable,
    kept: _Kept,
    names: Sequence[str],
    rows: Ints,
    at: list[int],
    pods: Assumed,
    policy: str,
    out: Verdicts,
) -> dict[int, NodeView]:
    """The nodes `at` (pods assumed on them, rows current) decided at once into `out` where
    `vector` can, on their rows with the pods taken (`taken.py`); the others as views for
    `decide`. A refusal is `resolvable` when the node's row alone admits the pod (its kept
    answer, current: `_decide_rows` decided it)."""
    mine = rows[at]
    assumed = [pods[names[i]] for i in at]
    decided = np.zeros(len(at), bool)
    if not SCALAR:
        taken = TakenTable(table, mine, assumed)
        answers = decide_rows(pod, unit_of(pod), taken, np.arange(len(at), dtype=np.int64), policy)
        decided = answers.decided
        for k in np.flatnonzero(decided & ~answers.fits).tolist():
            i, row = at[k], int(mine[k])
            if kept.fits[row] and kept.reasons[row]:  # the row alone is not checked: `decide`
                decided[k] = False
                continue
            resolvable = bool(kept.fits[row]) and bool(assumed[k])
            out.reasons[i] = answers.reasons[k] + (
                f" (counting {len(assumed[k])} pod(s) bound here that the node's "
                "NodeResourceTopology does not show yet)"
                if resolvable
                else ""
            )
            out.resolvable[i] = resolvable
        index = np.array(at, np.int64)[decided]
        out.fits[index], out.score[index] = answers.fits[decided], answers.score[decided]
    views = {}
    for k in np.flatnonzero(~decided).tolist():
        i, row = at[k], int(mine[k])
        generation, manager = int(table.generation[row]), table.managers[row]
        views[i] = NodeView(names[i], generation, table.state_of(row), manager, assumed[k])
    return views


def _decide_rows(
    pod: Pod, shape: Hashable, table: NodeTable, kept: _Kept, rows: Ints, policy: str
) -> None:
    """Decide the rows whose kept answer is stale: at once where `vector` can, else one by one."""
    stale = rows[kept.stamp[rows] != table.stamp[rows]]
    if not len(stale):
        return
    answers = decide_rows(pod, None if SCALAR else unit_of(pod), table, stale, policy)
    kept.stamp[stale] = table.stamp[stale]
    kept.fits[stale], kept.score[stale] = answers.fits, answers.score
    for row, reason in zip(stale.tolist(), answers.reasons, strict=True):
        kept.reasons[row] = reason
    for row in stale[~answers.decided].tolist():
        view = NodeView(
            table.names[row], int(table.generation[row]), table.state_of(row), table.managers[row]
        )
        d = decide(pod, shape, view, view.name, policy)
        kept.fits[row], kept.score[row], kept.reasons[row] = (
            d.fits,
            d.score if d.fits else 0,
            d.reason,
        )
