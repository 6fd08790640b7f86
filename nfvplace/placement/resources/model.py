"""The exact model of one request on one host, as the kinds build it (CP-SAT), and its solution.

The solver core creates one boolean per (cpu-set, allowed node) (`on_node`), then asks every kind for
its usage terms (`post_demand`) and then for its limits and costs (`post_limits`). The CPU kind sums
its usage terms per node and pool (`use`: the classes of free cores that the cpu-sets and the emulator
PU draw from); every kind adds to the objective (`cost`, by the cost names the kinds declare) and
keeps the variables it reads back after the solve (`keep`, under its own `ReadBack` handle, whose
key type is the kind's: the solved values come back typed, `Layout.of(handle)`).
A verdict's model (`costs` false: a filter asks only whether a layout exists) is the same model
without its objective: the kinds post the same variables and constraints, their costs dropped.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import cast

from ortools.sat.python import cp_model

from ..options import Options
from ..request import Request
from .base import HostFree


@dataclass(frozen=True, slots=True)
class ReadBack[K: Hashable]:
    """A kind's handle on the variables it reads back after the solve, each under a key of type K
    (the CPU kind's (count, cpu-set, node), the NICs' (interface, port), ...)."""

    kind: str


@dataclass
class ModelContext:
    model: cp_model.CpModel
    request: Request
    free: HostFree
    options: Options
    # False for a verdict (a filter asks only whether a layout exists): its model posts no
    # objective, so the costs are not collected (`cost` drops them, the core prices no node)
    costs: bool = True
    # on_node[(cpu_set, node)]: the cpu-set sits on that node
    on_node: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    # usage terms per node and pool, summed against the pool size by the pool's kind
    use: dict[tuple[int, str], list[cp_model.LinearExprT]] = field(default_factory=dict)
    # objective terms by what they measure (the cost names of the kinds), summed and minimised
    objective: dict[str, list[cp_model.LinearExprT]] = field(default_factory=dict)
    # variables each kind reads back after the solve, by kind name and key (`keep`, `Layout.of`)
    read_back: dict[str, dict[Hashable, cp_model.IntVar]] = field(default_factory=dict)

    def add_use(self, node: int, pool: str, term: cp_model.LinearExprT) -> None:
        self.use.setdefault((node, pool), []).append(term)

    def cost(self, name: str, term: cp_model.LinearExprT) -> None:
        """Add `term` to the objective under `name` (a cost a kind declares); dropped when the
        model is a verdict's (`costs` false)."""
        if self.costs:
            self.objective.setdefault(name, []).append(term)

    def node_var(self, cpu_set: int, node: int) -> cp_model.IntVar | None:
        """The boolean of `cpu_set` on NUMA node `node` (None: not an allowed node)."""
        return self.on_node.get((cpu_set, node))

    def keep[K: Hashable](self, handle: ReadBack[K], key: K, var: cp_model.IntVar) -> None:
        self.read_back.setdefault(handle.kind, {})[key] = var


@dataclass
class Layout:
    """A solved placement on one host: the node of each cpu-set, and the value of every variable
    the kinds kept (counts per class of free core, the port of each interface, ...)."""

    host: str
    nodes: dict[int, int]
    values: Mapping[str, Mapping[Hashable, int]] = field(default_factory=dict)
    objective: float = 0.0
    costs: dict[str, int] = field(default_factory=dict)  # objective by cost name (a verdict: none)
    optimal: bool = True

    def of[K: Hashable](self, handle: ReadBack[K]) -> Mapping[K, int]:
        return cast(Mapping[K, int], self.values.get(handle.kind, {}))
