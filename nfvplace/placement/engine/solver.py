"""The exact model of one request on one candidate host (OR-Tools CP-SAT, one worker).

Variables are named after what they mean (`on_node[cs0->n1]`, `iso_whole[cs0n1]`,
`port[eth1->0000:af:00.0]`) so a solution prints itself. The core places each cpu-set on one allowed
node (at the policy's node cost) and keeps cpu-sets on distinct nodes when the VM asks; the kinds
then post their usage terms (`post_demand`) and their limits and costs (`post_limits`), in the order
`resources.MODEL_LIMITS` says. The exact ids are chosen afterwards from the values the kinds kept
(`assign.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ortools.sat.python import cp_model
from ortools.sat.python import cp_model_helper as cmh

from ..options import Options
from ..request import Request
from ..resources import BLAME, MODEL_DEMAND, MODEL_LIMITS
from ..resources.base import HostFree
from ..resources.direct import NoAnswer
from ..resources.model import Layout, ModelContext
from .direct import NodePrices, direct_layout
from .policies import node_cost

DISTINCT = "numa"  # the core's own family: distinct NUMA nodes for the cpu-sets


_BOOLEAN = cp_model.Domain(0, 1)
_BOOL_AND = cmh.BoolArgumentConstraint.bool_and


@lru_cache(maxsize=1024)  # the kinds' bounds are counts of a host's threads, ports and Gbps
def _domain(lb: int, ub: int) -> cp_model.Domain:
    return cp_model.Domain(lb, ub)


class _CpModel(cp_model.CpModel):
    """CpModel without the pre-PEP 8 aliases that `CpModel.__init__` adds to every instance (about
    1 ms per model, as much as solving one of these small models), and with the calls the kinds
    make most made by the calls `CpModel`'s make, less its Python around them: variables (an
    integer domain built once per bounds), linear constraints, implications and the objective
    (its variables' indices copied at once). The same proto (`test_solver.py`)."""

    def __init__(self) -> None:
        cmh.CpBaseModel.__init__(self, None)
        self._proto = self.model_proto

    def new_bool_var(self, name: str) -> cp_model.IntVar:
        return cp_model.IntVar(self._proto).with_name(name).with_domain(_BOOLEAN)

    def new_int_var(
        self, lb: cp_model.IntegralT, ub: cp_model.IntegralT, name: str
    ) -> cp_model.IntVar:
        domain = _domain(int(lb), int(ub))
        return cp_model.IntVar(self._proto).with_name(name).with_domain(domain)

    def add(self, ct: Any) -> cp_model.Constraint:
        if type(ct) is cp_model.BoundedLinearExpression:
            added: cp_model.Constraint = self._add_bounded_linear_expression(ct)  # type: ignore[attr-defined]
            return added
        return super().add(ct)

    def add_implication(self, a: cp_model.LiteralT, b: cp_model.LiteralT) -> cp_model.Constraint:
        added: cp_model.Constraint = self._add_bool_argument_constraint(_BOOL_AND, b)  # type: ignore[attr-defined]
        added.only_enforce_if(a)
        return added

    def minimize(self, obj: cp_model.ObjLinearExprT) -> None:
        """`CpModel.minimize`, its variables' indices copied at once (an expression with a float
        in it, which `FlatIntExpr` refuses, as `CpModel` writes it)."""
        try:
            flat = cmh.FlatIntExpr(obj)  # type: ignore[arg-type]
        except TypeError:
            super().minimize(obj)
            return
        self._proto.clear_objective()
        self._proto.clear_floating_point_objective()
        objective = self._proto.objective
        objective.vars.extend([var.index for var in flat.vars])
        objective.scaling_factor = 1.0
        objective.offset = flat.offset
        objective.coeffs.extend(flat.coeffs)


@dataclass(frozen=True)
class SolveFailure:
    host: str
    status: str  # "infeasible" or "timeout"


def _post_nodes(
    ctx: ModelContext, allowed: dict[int, set[int]], skip: frozenset[str], prices: NodePrices
) -> bool:
    """One node per cpu-set, among its allowed nodes; False when a cpu-set has none."""
    request, free = ctx.request, ctx.free
    for cs in request.cpu_sets:
        choices = []
        for slot, node in enumerate(free.node_ids):
            if node in allowed.get(cs.id, set()):
                var = ctx.model.new_bool_var(f"on_node[cs{cs.id}->n{node}]")
                ctx.on_node[(cs.id, node)] = var
                choices.append(var)
                if ctx.costs:  # a verdict's model has no objective to price the node in
                    price = prices.get((cs.id, node))
                    if price is None:
                        price = node_cost(free, slot, cs, request, ctx.options)
                    ctx.cost("node", price * var)
        if not choices:
            return False
        ctx.model.add_exactly_one(choices)
    if request.distinct_nodes and len(request.cpu_sets) > 1 and DISTINCT not in skip:
        for node in free.node_ids:
            here = [
                ctx.on_node[(cs.id, node)]
                for cs in request.cpu_sets
                if (cs.id, node) in ctx.on_node
            ]
            if len(here) > 1:
                ctx.model.add_at_most_one(here)
    return True


def build(
    free: HostFree,
    request: Request,
    allowed: dict[int, set[int]],
    options: Options,
    skip: frozenset[str] = frozenset(),
    optimize: bool = True,
    prices: NodePrices | None = None,
) -> ModelContext | None:
    """The exact model (None: a cpu-set has no allowed node). With `optimize=False`, the same model
    without its objective: no cost is collected, nothing else changes (`test_solver.py` checks
    the protos). `prices`: node costs the direct path already worked out (the same function of
    the same arguments), by (cpu-set, node)."""
    ctx = ModelContext(
        model=_CpModel(), request=request, free=free, options=options, costs=optimize
    )
    if not _post_nodes(ctx, allowed, skip, prices or {}):
        return None
    for demand in MODEL_DEMAND:
        demand.post_demand(ctx)
    for kind in MODEL_LIMITS:
        if kind.name not in skip:
            kind.post_limits(ctx)
    if ctx.objective:
        # one n-ary sum, not n-1 nested additions: the same objective in the proto, built faster
        terms = [t for parts in ctx.objective.values() for t in parts]
        ctx.model.minimize(cp_model.LinearExpr.sum(terms))
    return ctx


def solve(
    free: HostFree,
    request: Request,
    allowed: dict[int, set[int]],
    options: Options,
    skip: frozenset[str] = frozenset(),
    optimize: bool = True,
) -> Layout | SolveFailure:
    """Solve; `skip` leaves the limits of the kinds named out (to name the kind that blocks).
    `optimize=False` asks only whether a layout exists: the first one found is returned, its
    costs neither minimised nor priced (a filter's verdict: the same constraints, a third less
    solver time). The whole model is answered without CP-SAT where that answer is provably
    CP-SAT's (`direct.py`); CP-SAT decides the rest."""
    prices: NodePrices = {}
    if not skip:
        found = direct_layout(free, request, allowed, options, optimize, prices)
        if isinstance(found, Layout):
            return found
        if found is NoAnswer.infeasible:
            return SolveFailure(free.id, "infeasible")
    return solve_model(free, request, allowed, options, skip, optimize, prices)


def solve_model(
    free: HostFree,
    request: Request,
    allowed: dict[int, set[int]],
    options: Options,
    skip: frozenset[str] = frozenset(),
    optimize: bool = True,
    prices: NodePrices | None = None,
) -> Layout | SolveFailure:
    """`solve` by CP-SAT alone."""
    ctx = build(free, request, allowed, options, skip, optimize, prices)
    if ctx is None:
        return SolveFailure(free.id, "infeasible")
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = options.seed
    solver.parameters.max_time_in_seconds = options.time_limit_s
    # these models have tens of variables: presolve and LP relaxations cost more than they save
    # (same optimum, proved; about half the time per solve)
    solver.parameters.cp_model_presolve = False
    solver.parameters.linearization_level = 0
    status = solver.solve(ctx.model)
    if status == cp_model.INFEASIBLE or status == cp_model.MODEL_INVALID:
        return SolveFailure(free.id, "infeasible")
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return SolveFailure(free.id, "timeout")
    return _layout(ctx, solver, status == cp_model.OPTIMAL)


def _layout(ctx: ModelContext, solver: cp_model.CpSolver, optimal: bool) -> Layout:
    nodes = {cs: node for (cs, node), var in ctx.on_node.items() if solver.boolean_value(var)}
    values = {
        kind: {key: int(solver.value(var)) for key, var in kept.items()}
        for kind, kept in ctx.read_back.items()
    }
    costs = {
        k: int(solver.value(cp_model.LinearExpr.sum(terms))) for k, terms in ctx.objective.items()
    }
    # the objective as the sum of its integer parts: CP-SAT's `objective_value` is that sum
    # computed in floating point, at times an ulp off (54.00000000000001)
    return Layout(
        host=ctx.free.id,
        nodes=nodes,
        values=values,
        objective=float(sum(costs.values())),
        costs=costs,
        optimal=optimal,
    )


FAMILIES: dict[str, str] = {
    **{kind.name: kind.family for kind in BLAME},
    DISTINCT: "distinct NUMA nodes for the cpu-sets",
}
"""What the exact model is blamed on, in the order it is tried: each kind's limits, then the
distinct-nodes rule."""


def blame(
    free: HostFree, request: Request, allowed: dict[int, set[int]], options: Options
) -> str | None:
    """The family whose removal makes an infeasible model feasible (first in order)."""
    for family in FAMILIES:
        if not isinstance(
            solve(free, request, allowed, options, frozenset({family})), SolveFailure
        ):
            return family
    return None
