"""The exact model answered without CP-SAT where the answer is provably CP-SAT's (issue 38).

The exact model (`solver.py`) puts each cpu-set on one allowed node (distinct nodes when the VM
asks), and the kinds are tied to each other only through those node booleans. So this tries every
assignment of nodes (a few: cpu-sets x allowed nodes) and asks every kind of the model for its
part with those nodes fixed (`ModelDirect`, `resources/direct.py`):

- a verdict (`optimize=False`: a filter asks only whether a layout exists) is feasible as soon as
  one assignment has every kind's part, and infeasible when every assignment has a kind that says
  so; the layout returned has the nodes and the kinds' values of that assignment (a verdict's
  reader reads neither);
- the best layout is answered only when exactly one assignment reaches the lowest objective
  (node costs plus the kinds' costs) and every kind's part there is its unique best: then every
  optimal solution of the model has the same nodes, read-back values and costs, so it is the one
  CP-SAT proves optimal.

Anything else is `NoAnswer.unsure` and CP-SAT decides as before: a kind of the model that does
not implement the stage (and is in the model for this request), a kind that cannot say, a tie,
a request without cpu-sets. Under `pack`, a best layout whose lowest node cost two assignments
share goes to CP-SAT before any kind is asked (`_tied_nodes`: almost always a tie). One caveat,
by construction the same as CP-SAT's: a model CP-SAT would not prove within `time_limit_s`
(these have tens of variables: never seen) is answered here as proved.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import product
from typing import cast

from ..options import Options, Policy
from ..request import Request
from ..resources import MODEL_DEMAND, MODEL_LIMITS
from ..resources.base import HostFree
from ..resources.direct import Assignment, DirectPart, NoAnswer
from ..resources.model import Layout
from ..resources.stages import ModelDirect, ModelGate
from .policies import node_cost

MODEL_KINDS = tuple(dict.fromkeys((*MODEL_DEMAND, *MODEL_LIMITS)))
"""The kinds of the exact model in the order they post (their values and costs keep that order)."""


_ASKED = tuple(kind for kind in MODEL_KINDS if isinstance(kind, ModelDirect))
_GATED = tuple(
    kind
    for kind in MODEL_KINDS
    if not isinstance(kind, ModelDirect) and isinstance(kind, ModelGate)
)
_ALWAYS = tuple(k for k in MODEL_KINDS if not isinstance(k, ModelDirect | ModelGate))
"""The kinds of the model without the stage: gated (in the model for some requests) or always."""


def _kinds(request: Request) -> tuple[ModelDirect, ...] | None:
    """The kinds to ask (None: one in the model for this request cannot be asked)."""
    if _ALWAYS or any(kind.in_model(request) for kind in _GATED):
        return None
    return _ASKED


def _assignments(
    request: Request, allowed: Mapping[int, frozenset[int]], node_ids: tuple[int, ...]
) -> Iterator[dict[int, int]]:
    ids = [cs.id for cs in request.cpu_sets]
    distinct = request.distinct_nodes and len(ids) > 1
    for nodes in product(*([n for n in node_ids if n in allowed[cs]] for cs in ids)):
        # a node per cpu-set; distinct nodes when the VM asks (`solver._post_nodes`)
        if not distinct or len(set(nodes)) == len(nodes):
            yield dict(zip(ids, nodes, strict=True))


def _ask(a: Assignment, kinds: tuple[ModelDirect, ...]) -> list[DirectPart] | NoAnswer:
    """Every kind's part with these nodes; infeasible when one kind says so (exact, whatever
    the others say), else unsure when one cannot say."""
    parts: list[DirectPart] = []
    unsure = False
    for kind in kinds:
        part = kind.direct(a)
        if part is NoAnswer.infeasible:
            return part
        if isinstance(part, NoAnswer):
            unsure = True
        else:
            parts.append(part)
    return NoAnswer.unsure if unsure else parts


NodePrices = dict[tuple[int, int], int]
"""The policy's cost of a cpu-set on a node, by (cpu-set, node): worked out here for the
assignments, and handed to the model's build when CP-SAT decides (`solver.build`)."""


def direct_layout(
    free: HostFree,
    request: Request,
    allowed: Mapping[int, set[int]],
    options: Options,
    optimize: bool,
    prices: NodePrices | None = None,
) -> Layout | NoAnswer:
    """The exact model's answer without CP-SAT: a layout, `infeasible`, or `unsure` (CP-SAT).
    The node costs it works out are kept in `prices`."""
    kinds = _kinds(request)
    if kinds is None or not request.cpu_sets:
        return NoAnswer.unsure
    frozen = {
        cs.id: frozenset(n for n in free.node_ids if n in allowed.get(cs.id, ()))
        for cs in request.cpu_sets
    }
    priced: NodePrices = {} if prices is None else prices
    choices = list(_assignments(request, frozen, free.node_ids))
    pack = optimize and options.policy is Policy.pack
    if pack and _tied_nodes(free, request, options, choices, priced):
        return NoAnswer.unsure  # before any `Assignment` is made: most of these models are tied
    memo: dict[str, object] = {NODE_COSTS: priced}
    assignments = [
        Assignment(free, request, options, frozen, nodes, optimize, memo) for nodes in choices
    ]
    best: list[tuple[int, Assignment, list[DirectPart]]] = []
    unsure = False
    for a in assignments:
        parts = _ask(a, kinds)
        if parts is NoAnswer.infeasible:
            continue
        if isinstance(parts, NoAnswer):
            if optimize:
                return parts  # its best might be the lowest: not worked out
            unsure = True
            continue
        if not optimize:
            return _layout(a, parts)
        best.append((_objective(a, parts), a, parts))
    if not best:
        return NoAnswer.unsure if unsure else NoAnswer.infeasible
    low = min(cost for cost, _, _ in best)
    lowest = [(a, parts) for cost, a, parts in best if cost == low]
    return _layout(*lowest[0]) if len(lowest) == 1 else NoAnswer.unsure


def _tied_nodes(
    free: HostFree,
    request: Request,
    options: Options,
    choices: list[dict[int, int]],
    prices: NodePrices,
) -> bool:
    """Whether two assignments of nodes share the lowest node cost. Under `pack` (whose node cost
    weighs a node's free threads, free memory and the VFs, ports and threads it keeps) their
    layouts then almost always tie at the lowest objective too: in the engine's mix 87 of 100
    such models were ties only CP-SAT decides, so CP-SAT answers them without the kinds being
    asked first. (`spread` prices free threads alone: its node costs tie where the layouts do
    not.) Exact either way: the direct path answers only with CP-SAT's answer."""
    if len(choices) < 2:
        return False
    costs = [_priced(free, request, options, nodes, prices) for nodes in choices]
    return costs.count(min(costs)) > 1


NODE_COSTS = "node costs"  # the core's entry in `Assignment.memo` (no kind has that name)


def _priced(
    free: HostFree, request: Request, options: Options, nodes: Mapping[int, int], prices: NodePrices
) -> int:
    """The policy's cost of these nodes (`solver._post_nodes`), each (cpu-set, node) priced once."""
    total = 0
    for cs in request.cpu_sets:
        node = nodes[cs.id]
        price = prices.get((cs.id, node))
        if price is None:
            price = prices[(cs.id, node)] = node_cost(free, free.slot(node), cs, request, options)
        total += price
    return total


def _node_costs(a: Assignment) -> int:
    return _priced(a.free, a.request, a.options, a.nodes, cast(NodePrices, a.memo[NODE_COSTS]))


def _objective(a: Assignment, parts: list[DirectPart]) -> int:
    return _node_costs(a) + sum(v for part in parts for v in part.costs.values())


def _layout(a: Assignment, parts: list[DirectPart]) -> Layout:
    """The layout as `solver._layout` reads it back: values by kind and costs by name, in the
    order the model posts them (the node costs first)."""
    values = {kind: kept for part in parts for kind, kept in part.values.items() if kept}
    costs: dict[str, int] = {"node": _node_costs(a)} if a.optimize else {}
    for part in parts:
        for name, value in part.costs.items():
            costs[name] = costs.get(name, 0) + value
    return Layout(
        host=a.free.id,
        nodes=dict(a.nodes),
        values=values,
        objective=float(sum(costs.values())),
        costs=costs,
        optimal=True,
    )
