"""The rows of nodes with pods assumed on them, as `decide` sees those nodes: copies of their
columns with what the assumed pods take taken (`NodeState.take`: free amounts less the pods',
never below zero; a NUMA node's memory in use once a pod takes some of it), so that
`vector.decide_rows` decides them at once, as it decides the rows with none.

The shared `NodeTable` is never written: a `TakenTable` is built for one call and dropped. A row
whose assumed pods cannot be stated in columns (a negative amount, a row the columns do not hold
exactly) is left undecided, for `decide`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .columns import MAX_NUMA, ROW_ARRAYS, Ints, NodeTable, Pools
from .state import Consumption, NodeState

Pods = tuple[tuple[str, Consumption], ...]
"""The pods assumed on a node (uid, what it takes), oldest first."""


class TakenTable(NodeTable):
    """Rows `rows` of `table` (row i here: `rows[i]` there), each with `pods[i]` taken."""

    def __init__(self, table: NodeTable, rows: Ints, pods: Sequence[Pods]) -> None:
        super().__init__(capacity=1)
        self.capacity = len(rows)
        for name in ROW_ARRAYS:
            setattr(self, name, getattr(table, name)[rows])
        self.cpu = table.cpu.at(rows)
        self.memory = {r: p.at(rows) for r, p in table.memory.items()}
        self.devices = {r: p.at(rows) for r, p in table.devices.items()}
        self.orders = table.orders
        self.names = [table.names[r] for r in rows.tolist()]
        self.states = [table.states[r] for r in rows.tolist()]
        self.managers = [table.managers[r] for r in rows.tolist()]
        self.pods = list(pods)
        self._take()

    def state_of(self, row: int) -> NodeState:
        """The row's counts with its assumed pods taken (what `NodeView.state` gives)."""
        state = super().state_of(row).copy()
        for _uid, consumption in self.pods[row]:
            state.take(consumption)
        return state

    def _take(self) -> None:
        """Each row's assumed pods summed per resource and NUMA position, then taken."""
        taken: dict[str, list[tuple[int, int, int]]] = {}
        exact = self.exact.tolist()
        positions: dict[tuple[int, ...], dict[int, int]] = {}
        for i, (state, pods) in enumerate(zip(self.states, self.pods, strict=True)):
            if state is None or not exact[i]:
                continue
            position = positions.get(state.numa.nodes)
            if position is None:
                nodes = state.numa.nodes
                position = positions[nodes] = {node: j for j, node in enumerate(nodes)}
            for _uid, consumption in pods:
                for resource, per_node in consumption.items():
                    entries = taken.get(resource)
                    if entries is None:
                        entries = taken[resource] = []
                    for node, amount in per_node.items():
                        if amount < 0:
                            self.exact[i] = False  # `take` clamps each pod: to `decide`
                        elif amount and node in position:
                            entries.append((i, position[node], amount))
        for resource, entries in taken.items():
            if not entries:
                continue
            at = np.array(entries, np.int64)
            amounts = np.zeros((len(self.numa), MAX_NUMA), np.int64)
            np.add.at(amounts, (at[:, 0], at[:, 1]), at[:, 2])
            if resource == "cpu":
                _less(self.cpu, amounts)
                continue
            memory = self.memory.get(resource)
            if memory is not None:  # a node's memory type, else its device of that name
                _less(memory, amounts)
                self.memory_used |= memory.present & (amounts > 0)
                amounts = amounts * ~memory.present.any(axis=1)[:, None]
            if resource in self.devices:
                _less(self.devices[resource], amounts)


def _less(pools: Pools, amounts: Ints) -> None:
    pools.free = np.maximum(pools.free - amounts, 0)  # 0 where the node has no pool: kept
