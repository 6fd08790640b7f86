"""The CPU kind's columns in the fleet index."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import BoolArray, IntArray, Table
from .pools import CpuFree, CpuNode


@dataclass(frozen=True, slots=True)
class CpuTable(Table):
    # per host x node slot
    whole: IntArray  # free cores with no thread used
    whole_threads: IntArray  # their free threads
    single: IntArray  # free single-thread cores
    half_busy: IntArray  # free threads whose sibling a VM uses or the host reserves
    eligible: IntArray  # threads VMs may use
    # per host
    smt: BoolArray
    free_threads: IntArray
    total_threads: IntArray  # eligible threads (at least 1: a share's denominator)

    @classmethod
    def empty(cls, hosts: int, nodes: int) -> CpuTable:
        def grid() -> IntArray:
            return np.zeros((hosts, nodes), dtype=np.int64)

        return cls(
            whole=grid(),
            whole_threads=grid(),
            single=grid(),
            half_busy=grid(),
            eligible=grid(),
            smt=np.zeros(hosts, dtype=np.bool_),
            free_threads=np.zeros(hosts, dtype=np.int64),
            total_threads=np.zeros(hosts, dtype=np.int64),
        )

    def fill(self, i: int, cpu: CpuFree) -> None:
        for grid in (
            self.whole,
            self.whole_threads,
            self.single,
            self.half_busy,
            self.eligible,
        ):
            grid[i, :] = 0
        for j, node in enumerate(cpu.nodes):
            self._node(i, j, node)
        self._host(i, cpu)

    def fill_changed(self, i: int, cpu: CpuFree, before: CpuFree) -> None:
        """Row i, filled from `before` (the same nodes), once the part is `cpu`: the nodes whose
        part is not the same object written again."""
        for j, node in enumerate(cpu.nodes):
            if node is not before.nodes[j]:
                self._node(i, j, node)
        self._host(i, cpu)

    def _node(self, i: int, j: int, node: CpuNode) -> None:
        self.whole[i, j] = len(node.whole_cores)
        # the threads of its whole cores: what is free that is neither single nor half busy
        self.whole_threads[i, j] = node.free_threads - len(node.single_cores) - len(node.half_busy)
        self.single[i, j] = len(node.single_cores)
        self.half_busy[i, j] = len(node.half_busy)
        self.eligible[i, j] = node.eligible_threads

    def _host(self, i: int, cpu: CpuFree) -> None:
        self.smt[i] = cpu.smt
        self.free_threads[i] = sum(n.free_threads for n in cpu.nodes)
        self.total_threads[i] = max(sum(n.eligible_threads for n in cpu.nodes), 1)
