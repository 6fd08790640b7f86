"""One candidate host: the kinds' choices made without the model, the exact model, exact ids, and
the claim (kept pending where the kinds prove it free: `index/pending.py`). The answer is typed:
`Claimed`, or `Refused` with its reason (an infeasible model is `Infeasible`, named by `blame`
only when no host fits, since naming it costs a few more solves). `solved` stops before the ids
and the claim, for a scheduler's filter that asks only whether the host fits: the same decisions
and the same exact model (the steps after it refuse a host only on an internal error,
`Reason.internal` or `Reason.claim`)."""

from __future__ import annotations

from dataclasses import dataclass

from ...claims import ClaimConflictError, claim
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ..index import FleetIndex
from ..index.pending import HostClaim, free_pending
from ..options import Options
from ..reasons import Reason
from ..request import Request
from ..resources import DECIDES, EXPLAINS, implementing
from ..resources.base import HostFree
from ..resources.draft import AssignmentError
from ..resources.kind import Decisions, Refusal
from ..resources.model import Layout
from ..resources.stages import ModelCosts, ModelGate
from ..result import ExplainRow
from .assign import build_configuration, instance_id
from .filter import FilterOutcome
from .policies import NODE_COST
from .solver import FAMILIES, SolveFailure, blame, solve

_MODEL_GATES = implementing(ModelGate)

SOLVE_SUMMARY = {
    Reason.infeasible: "fail the exact check (the needs fit one by one but not together)",
    Reason.timeout: "were not decided within the solver time limit",
    Reason.internal: "broke an internal invariant after the solve (please report)",
    Reason.claim: "could not be claimed (internal inconsistency, please report)",
}
"""The summary phrase of each way the exact stage refuses a host that passed the filter."""


@dataclass(frozen=True, slots=True)
class Claimed:
    configuration: VmConfiguration
    made: HostClaim | ComputeHostDescriptor  # the host with the configuration claimed (pending)
    rows: list[ExplainRow]  # what the exact model chose (for --explain)

    @property
    def host(self) -> ComputeHostDescriptor:
        return self.made.host() if isinstance(self.made, HostClaim) else self.made


@dataclass(frozen=True, slots=True)
class Solved:
    """The kinds decided and the exact model found a layout (nothing written, nothing claimed)."""

    free: HostFree
    layout: Layout | None
    decisions: Decisions


@dataclass(frozen=True, slots=True)
class Refused:
    reason: Reason
    phrase: str  # for the one-line summary
    message: str  # for the host's rejection


def refused(reason: Reason) -> Refused:
    return Refused(
        reason, SOLVE_SUMMARY[reason], f"passed the count filter, but the exact model says {reason}"
    )


@dataclass(frozen=True)
class Infeasible:
    """The exact model found no layout; `refusal()` names the family that blocks (a few solves)."""

    free: HostFree
    request: Request
    allowed: dict[int, set[int]]
    options: Options

    def refusal(self) -> Refused:
        family = blame(self.free, self.request, self.allowed, self.options)
        if family is None:
            return refused(Reason.infeasible)
        return Refused(
            Reason.infeasible,
            f"fail the exact check on {FAMILIES[family]}",
            "each need fits on its own, but not all together: without the constraints on "
            f"{FAMILIES[family]} the model would be feasible",
        )


Attempt = Claimed | Refused | Infeasible


def _allowed(fleet: FleetIndex, position: int, outcome: FilterOutcome) -> dict[int, set[int]]:
    """The node ids each part of the request may go to on the host at `position`."""
    return {
        part: {int(fleet.node_id[position, j]) for j in range(fleet.max_nodes) if ok[position, j]}
        for part, ok in outcome.node_ok.items()
    }


def solved(
    fleet: FleetIndex,
    position: int,
    request: Request,
    outcome: FilterOutcome,
    options: Options,
    optimize: bool = True,
) -> Solved | Refused | Infeasible:
    """Whether the host at `position` takes `request`: the kinds' choices and the exact model (its
    best layout, or with `optimize=False` the first one found: a verdict alone)."""
    free = fleet.free(position)
    allowed = _allowed(fleet, position, outcome)
    decisions = Decisions()
    frozen = {part: frozenset(nodes) for part, nodes in allowed.items()}
    for kind in DECIDES:
        decided = kind.decide(free, request, frozen, options)
        if isinstance(decided, Refusal):
            return Refused(decided.reason, decided.phrase, decided.message)
        if decided is not None:
            decisions.put(kind, decided)
    layout: Layout | None = None
    if any(kind.in_model(request) for kind in _MODEL_GATES):
        cpu_sets = {cs.id: allowed[cs.id] for cs in request.cpu_sets}
        found = solve(free, request, cpu_sets, options, optimize=optimize)
        if isinstance(found, SolveFailure):
            if found.status == "infeasible":
                return Infeasible(free, request, cpu_sets, options)
            return refused(Reason.timeout)
        layout = found
    return Solved(free, layout, decisions)


def attempt(
    fleet: FleetIndex,
    position: int,
    request: Request,
    outcome: FilterOutcome,
    options: Options,
    instance: str | None,
    explain: bool = True,
) -> Attempt:
    """`explain=False`: `Claimed.rows` left empty (a caller that shows none of them)."""
    found = solved(fleet, position, request, outcome, options)
    if not isinstance(found, Solved):
        return found
    free, layout, decisions = found.free, found.layout, found.decisions
    rows: list[ExplainRow] = []
    if explain:
        rows = [row for kind in EXPLAINS for row in kind.explain(free, request, layout, decisions)]
        if layout is not None:
            rows.extend(_cost_rows(layout))
    base, pending = fleet.held(position)
    taken = {i.id for i in base.instances}.union(c.owner for c in pending)
    try:
        config = build_configuration(
            base.id,
            free,
            request,
            layout,
            instance_id(base.id, taken, request, instance),
            decisions,
        )
    except AssignmentError:
        return refused(Reason.internal)  # the model guarantees the ids exist: a bug, not a misfit
    return _claim(fleet, position, free, config, taken, rows)


def _claim(
    fleet: FleetIndex,
    position: int,
    free: HostFree,
    config: VmConfiguration,
    taken: set[str],
    rows: list[ExplainRow],
) -> Claimed | Refused:
    """`config` claimed on the host at `position` (whose free resources are `free`): kept pending
    where the kinds prove it free (`free_pending`; a new instance, for the one a claim adds), or
    else claimed on the host now, refused when it conflicts."""
    base, pending = fleet.held(position)
    new = config.owner not in taken and config.host == base.id
    after = free_pending(base, free, config) if new else None
    if after is not None:
        made = HostClaim(base, (*pending, config), fleet.version(position), after)
        return Claimed(config, made, rows)
    try:
        updated = claim(fleet.host_at(position), config)
    except ClaimConflictError:
        return refused(Reason.claim)
    return Claimed(config, updated, rows)


COSTS = {"node": NODE_COST} | {
    name: text for kind in implementing(ModelCosts) for name, text in kind.costs.items()
}
"""What each part of the exact model's objective measures, by cost name."""


def _cost_rows(layout: Layout) -> list[ExplainRow]:
    rows = [
        ExplainRow(f"cost: {name}", f"{value}", COSTS[name]) for name, value in layout.costs.items()
    ]
    proof = "proved best" if layout.optimal else "best found within the time limit"
    rows.append(
        ExplainRow(
            "exact model",
            f"total cost {layout.objective:g}, {proof}",
            "the sum of the costs above, minimised over every layout of the VM on this host",
        )
    )
    return rows
