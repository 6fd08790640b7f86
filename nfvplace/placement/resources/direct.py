"""The exact model answered without CP-SAT, one fixed node assignment at a time (`ModelDirect`).

For one node per cpu-set (an `Assignment`), the exact model falls apart by kind: the kinds are
tied to each other only through the cpu-sets' node booleans, so with those fixed each kind's
limits and costs are a small problem of its own. A kind that implements `ModelDirect` works that
problem out and answers with its part of the layout (`DirectPart`: the values of every variable
it would read back, and each cost it would post, in the order its model posts them), or says
that no layout exists with these nodes (`NoAnswer.infeasible`), or that it cannot say
(`NoAnswer.unsure`: a case it does not work out, or, when the layout is optimised, more than one
minimum in what it reads back or costs). `engine/direct.py` loops over the assignments and
answers only when the answer is provably CP-SAT's.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from ..options import Options
from ..request import Request
from .base import HostFree


@dataclass(frozen=True, slots=True)
class Assignment:
    """One node per cpu-set on one host, among the nodes each may take (`allowed`: the model's
    node booleans, whose read-back variables exist, at 0, on the nodes not taken)."""

    free: HostFree
    request: Request
    options: Options
    allowed: Mapping[int, frozenset[int]]  # cpu-set id -> the node ids it may take
    nodes: Mapping[int, int]  # cpu-set id -> the node id it takes
    optimize: bool  # False: a verdict (feasibility alone, no costs, any layout will do)
    # shared by the assignments of one model: what a kind works out once for all of them (by kind
    # name; what depends on the host, the request and the allowed nodes, never on `nodes`)
    memo: dict[str, object] = field(default_factory=dict, compare=False)

    def on(self, node: int) -> list[int]:
        """The ids of the cpu-sets on `node`, in the request's order."""
        return [cs.id for cs in self.request.cpu_sets if self.nodes[cs.id] == node]


@dataclass(frozen=True, slots=True)
class DirectPart:
    """A kind's unique best (or, for a verdict, some) part of the layout with the assignment's
    nodes: its read-back values by handle, and its costs by name (every cost it posts, at 0 when
    the nodes taken do not use it; none for a verdict)."""

    values: Mapping[str, Mapping[Hashable, int]] = field(default_factory=dict)
    costs: Mapping[str, int] = field(default_factory=dict)


class NoAnswer(Enum):
    infeasible = "infeasible"  # no layout with these nodes: exact
    unsure = "unsure"  # a case the kind does not work out, or a tie: CP-SAT decides


NOTHING = DirectPart()
"""The part of a kind that posts nothing for this request, or only limits that hold."""
