"""The Kubernetes door's nodes as columns: one row per node with a NodeResourceTopology, one column
per NUMA node position and resource (numpy arrays), so that a call decides for every named node
at once (`vector.py`) instead of node by node.

A row holds what `state.node_state` counts of the node's CHD (CPUs of each NUMA node: all of them,
the allocatable and the free ones; each memory type's and device's allocatable and free amounts;
whether a NUMA node's memory is in use) and its Topology Manager (policy, scope), with the node's
generation and a `stamp` that changes whenever the row is written (answers are kept per stamp).
The row keeps the `NodeState` and `TopologyManager` too: the scalar `decide` reads them for the
nodes the columns cannot decide exactly, and reasons are written from them.

`exact` says whether the row is one the vector decision may decide: at most `MAX_NUMA` NUMA nodes,
numbered in ascending order, each with CPUs; no pool with more free than allocatable; memory in
use given to one NUMA node only (as `node_state` reads an object). Other rows go to `decide`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...models.chd import ComputeHostDescriptor, TopologyManager
from ...store import Store
from .hints import BEST_EFFORT, NONE, RESTRICTED, SINGLE_NUMA_NODE
from .state import NodeState, Pool, node_state, topology_manager

MAX_NUMA = 8
"""NUMA nodes a row holds (the kubelet's Topology Manager takes 8 unless told otherwise)."""

POLICIES = (NONE, BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE)
SCOPES = ("container", "pod")

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


@dataclass
class Pools:
    """One resource over the rows: allocatable and free per NUMA node position, whether the node
    has a pool of it there, and whether the node lists the resource at all (perhaps with no
    pool)."""

    allocatable: Ints
    free: Ints
    present: Bools
    listed: Bools

    @classmethod
    def zeros(cls, capacity: int) -> Pools:
        shape = (capacity, MAX_NUMA)
        return cls(
            np.zeros(shape, np.int64),
            np.zeros(shape, np.int64),
            np.zeros(shape, bool),
            np.zeros(capacity, bool),
        )

    def at(self, rows: Ints) -> Pools:
        """The pools of rows `rows` only (copies), in that order."""
        return Pools(self.allocatable[rows], self.free[rows], self.present[rows], self.listed[rows])

    def grown(self, capacity: int) -> Pools:
        out = Pools.zeros(capacity)
        n = len(self.free)
        out.allocatable[:n], out.free[:n] = self.allocatable, self.free
        out.present[:n], out.listed[:n] = self.present, self.listed
        return out

    def clear(self, row: int) -> None:
        self.allocatable[row], self.free[row], self.present[row] = 0, 0, False
        self.listed[row] = False


HISTORY = 4
"""What a row held before, kept for the last few writes (prioritize decides on filter's rows)."""


@dataclass(frozen=True)
class Former:
    """What a row held before it was written again."""

    stamp: int
    generation: int
    state: NodeState | None
    manager: TopologyManager


ROW_ARRAYS = (
    "generation",
    "stamp",
    "numa",
    "exact",
    "memory_manager",
    "policy",
    "scope",
    "order",
    "cpu_total",
    "memory_used",
)
"""`NodeTable`'s arrays with one entry per row, besides the pools (`cpu`, `memory`, `devices`)."""


class NodeTable:
    """The rows (module docstring). Not thread-safe: `NodeSource` holds the lock."""

    def __init__(self, capacity: int = 64) -> None:
        self.row_of: dict[str, int] = {}
        self.names: list[str] = []
        self.states: list[NodeState | None] = []
        self.managers: list[TopologyManager] = []
        self.orders: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        self._order_ids: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = {}
        self._next_stamp = 1
        self._layout = 0  # changes when a name gets or loses its row
        self.history: dict[int, deque[Former]] = {}  # rows written again: what they held before
        self._rows_of: dict[tuple[str, ...], tuple[int, Ints]] = {}
        self._allocate(capacity)
        self.memory: dict[str, Pools] = {}
        self.devices: dict[str, Pools] = {}

    def _allocate(self, capacity: int) -> None:
        self.capacity = capacity
        self.generation = np.full(capacity, -1, np.int64)
        self.stamp = np.zeros(capacity, np.int64)
        self.numa = np.zeros(capacity, np.int64)
        self.exact = np.zeros(capacity, bool)
        self.memory_manager = np.zeros(capacity, bool)
        self.policy = np.zeros(capacity, np.int64)
        self.scope = np.zeros(capacity, np.int64)
        self.order = np.zeros(capacity, np.int64)
        self.cpu = Pools.zeros(capacity)  # allocatable: eligible CPUs; `cpu_total`: all CPUs
        self.cpu_total = np.zeros((capacity, MAX_NUMA), np.int64)
        self.memory_used = np.zeros((capacity, MAX_NUMA), bool)

    def _grow(self) -> None:
        old = self.__dict__.copy()
        n = self.capacity
        self._allocate(2 * n)
        for name in ROW_ARRAYS:
            getattr(self, name)[:n] = old[name]
        self.cpu = old["cpu"].grown(2 * n)
        self.memory = {r: p.grown(2 * n) for r, p in old["memory"].items()}
        self.devices = {r: p.grown(2 * n) for r, p in old["devices"].items()}

    def rows(self, names: Sequence[str]) -> Ints:
        """Each name's row, -1 where the node has none (kept for the last lists of names asked:
        kube-scheduler names the same nodes call after call)."""
        key = tuple(names)
        found = self._rows_of.get(key)
        if found is None or found[0] != self._layout:
            get = self.row_of.get
            found = (self._layout, np.fromiter((get(n, -1) for n in key), np.int64, len(key)))
            self._rows_of[key] = found
            while len(self._rows_of) > 8:
                del self._rows_of[next(iter(self._rows_of))]
        return found[1]

    def put(self, name: str, generation: int, state: NodeState, manager: TopologyManager) -> int:
        """Write the node's row (a new one, or its own again); its row number."""
        row = self.row_of.get(name)
        if row is None:
            row = len(self.names)
            if row == self.capacity:
                self._grow()
            self.row_of[name] = row
            self._layout += 1
            self.names.append(name)
            self.states.append(state)
            self.managers.append(manager)
        elif self.states[row] is not None:
            former = Former(
                int(self.stamp[row]),
                int(self.generation[row]),
                self.states[row],
                self.managers[row],
            )
            self.history.setdefault(row, deque(maxlen=HISTORY)).append(former)
        self.states[row], self.managers[row] = state, manager
        self.generation[row] = generation
        self.stamp[row] = self._next_stamp
        self._next_stamp += 1
        self.policy[row] = POLICIES.index(str(manager.policy))
        self.scope[row] = SCOPES.index(str(manager.scope))
        self.memory_manager[row] = state.memory_manager
        self.exact[row] = _exact(state)
        self.order[row] = self._order_id(state)
        for pools in (self.cpu, *self.memory.values(), *self.devices.values()):
            pools.clear(row)
        self.cpu_total[row] = 0
        self.memory_used[row] = False
        nodes = state.numa.nodes
        self.numa[row] = len(nodes)
        if self.exact[row]:
            self._write(row, state)
        return row

    def _write(self, row: int, state: NodeState) -> None:
        position = {node: j for j, node in enumerate(state.numa.nodes)}
        for node, j in position.items():
            self.cpu_total[row, j] = state.cpu_total.get(node, 0)
            self.memory_used[row, j] = bool(state.memory_groups.get(node, 0))
        _fill(self.cpu, row, position, state.cpus)
        for kind, columns in ((state.memory, self.memory), (state.devices, self.devices)):
            for resource, per_node in kind.items():
                if resource not in columns:
                    columns[resource] = Pools.zeros(self.capacity)
                _fill(columns[resource], row, position, per_node)

    def _order_id(self, state: NodeState) -> int:
        """The order the node's memory types and devices are listed in (scores sum in it)."""
        order = (tuple(state.memory), tuple(state.devices))
        found = self._order_ids.get(order)
        if found is None:
            found = self._order_ids[order] = len(self.orders)
            self.orders.append(order)
        return found

    def state_of(self, row: int) -> NodeState:
        """The counts the row was written from (a row held by a node)."""
        state = self.states[row]
        assert state is not None
        return state

    @property
    def last_stamp(self) -> int:
        """The stamp of the row written last (every row written after has a greater one)."""
        return self._next_stamp - 1

    def former(self, row: int, stamp: int) -> Former | None:
        """What `row` held when the row written last was the one of `stamp` (None: not kept, or
        the row was not written yet)."""
        for kept in reversed(self.history.get(row, ())):
            if kept.stamp <= stamp:
                return kept
        return None

    def drop(self, name: str) -> None:
        """The node is gone: its row is no longer its (a new one is written if it comes back)."""
        row = self.row_of.pop(name, None)
        if row is not None:
            self._layout += 1
            self.generation[row] = -1
            self.exact[row] = False
            self.states[row] = None


def _fill(pools: Pools, row: int, position: dict[int, int], per_node: dict[int, Pool]) -> None:
    pools.listed[row] = True
    for node, pool in per_node.items():
        j = position[node]
        pools.allocatable[row, j], pools.free[row, j] = pool.allocatable, pool.free
        pools.present[row, j] = True


def _exact(state: NodeState) -> bool:
    nodes = state.numa.nodes
    if not 1 <= len(nodes) <= MAX_NUMA or list(nodes) != sorted(set(nodes)):
        return False
    if set(state.cpus) != set(nodes) or any(state.cpu_total.get(n, 0) <= 0 for n in nodes):
        return False
    pools = [state.cpus, *state.memory.values(), *state.devices.values()]
    if any(not set(p) <= set(nodes) for p in pools):
        return False
    if any(not 0 <= p.free <= p.allocatable for per in pools for p in per.values()):
        return False
    return all(g in (0, 1 << n) for n, g in state.memory_groups.items())


class NodeSource:
    """A worker's rows, kept current with the store's change feed: each call asks the store only
    what changed since the last one (`Store.changes_since`), and counts again only the named
    nodes whose generation moved."""

    def __init__(self) -> None:
        self.table = NodeTable()
        self.lock = threading.Lock()
        self._known: dict[str, int] = {}  # every host's generation, as the change feed said
        self._stale: set[str] = set()  # hosts whose row is older than `_known` (or missing)
        self._watermark = -1

    def put(self, host: str, generation: int, chd: ComputeHostDescriptor) -> None:
        """A host's new document, as this worker stored it (the others read it from the feed)."""
        with self.lock:
            self._write(host, generation, chd)

    def _write(self, host: str, generation: int, chd: ComputeHostDescriptor) -> None:
        row = self.table.row_of.get(host)
        if row is not None and self.table.generation[row] > generation:
            return  # a newer one is written already
        self.table.put(host, generation, node_state(chd), topology_manager(chd))
        if self._known.get(host, generation) <= generation:
            self._known[host] = generation
            self._stale.discard(host)

    def prime(self, store: Store) -> int:
        """Every stored host counted into a row, as a worker starts: its first call would
        otherwise read and count every named node (6-9 s for 5,000, past kube-scheduler's
        default 5 s `httpTimeout`). Returns the rows written."""
        with self.lock:
            self._follow(store)
            stale = sorted(self._stale)
            self._read(store, stale)
            return len(stale) - len(self._stale.intersection(stale))

    def sync(self, store: Store, names: Sequence[str]) -> Ints:
        """Each name's row, current (-1: no host of that name); call with `lock` held."""
        self._follow(store)
        self._read(store, names)
        return self.table.rows(names)

    def _follow(self, store: Store) -> None:
        """Learn from the change feed which hosts changed since the last call (rows of deleted
        hosts dropped; those of changed ones stale)."""
        changes = store.changes_since(self._watermark)
        table = self.table
        for host, generation in changes.hosts.items():
            row = table.row_of.get(host)
            if generation is None:
                self._known.pop(host, None)
                self._stale.discard(host)
                table.drop(host)
                continue
            self._known[host] = generation
            if row is None or table.generation[row] != generation:
                self._stale.add(host)
            else:
                self._stale.discard(host)
        self._watermark = changes.seq

    def _read(self, store: Store, names: Sequence[str]) -> None:
        """Count again the stale rows among `names`, from the store."""
        wanted = self._stale.intersection(names) if self._stale else ()
        if wanted:
            for host, generation, chd in store.iter_availability(wanted):
                self._write(host, generation, chd)
