"""`place`: the pipeline for one VM Descriptor (filter -> rank -> exact model -> ids -> claim)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..claims import ClaimConflictError, claim
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from . import shared as shared_pool
from .assign import AssignmentError, build_configuration, instance_id
from .constraints.base import COSTS
from .explain import Reasons
from .filter import FilterOutcome, run_filter
from .hostview import HostView
from .index import BoolArray, FleetIndex
from .options import Options
from .policies import POLICY_SCORES, host_keys, score_terms
from .request import Request, build_request
from .result import ExplainRow, PlacementResult, Rejection
from .solver import FAMILIES, Layout, SolveFailure, blame, solve
from .variants import split

NO_KEY = np.iinfo(np.int64).max

SOLVE_SUMMARY = {
    "infeasible": "fail the exact check (the needs fit one by one but not together)",
    "shared": "have no shared PUs on one node with room for the vCPUs spread evenly",
    "timeout": "were not decided within the solver time limit",
    "internal": "broke an internal invariant after the solve (please report)",
    "claim": "could not be claimed (internal inconsistency, please report)",
}


@dataclass(frozen=True)
class _Infeasible:
    view: HostView
    request: Request
    allowed: dict[int, set[int]]
    options: Options

    def status(self) -> str:
        family = blame(self.view, self.request, self.allowed, self.options)
        return f"infeasible:{family}" if family else "infeasible"


@dataclass
class VmOutcome:
    configuration: VmConfiguration | None
    host: ComputeHostDescriptor | None
    reasons: Reasons
    considered: int
    passed: int
    explanation: list[str] = field(default_factory=list)
    rows: list[ExplainRow] = field(default_factory=list)


def _fleet(
    hosts: FleetIndex | Sequence[ComputeHostDescriptor] | Mapping[str, ComputeHostDescriptor],
) -> FleetIndex:
    return FleetIndex.of(hosts)


def place_vm(
    fleet: FleetIndex,
    vm: VmDescriptor,
    options: Options,
    consider: BoolArray | None = None,
    reasons: Reasons | None = None,
    instance: str | None = None,
) -> VmOutcome:
    reasons = reasons or Reasons()
    base: BoolArray = np.ones(len(fleet), dtype=np.bool_) if consider is None else consider.copy()
    groups: list[tuple[Request, FilterOutcome]] = []
    keys = np.full(len(fleet), NO_KEY, dtype=np.int64)
    owner = np.full(len(fleet), -1, dtype=np.int64)
    for descriptor, variant, mask in split(fleet, vm):
        request = build_request(descriptor, variant)
        outcome = run_filter(fleet, request, options, mask & base)
        reasons.add_outcome(outcome)
        if outcome.passing.any():
            group_keys = host_keys(fleet, request, options, outcome.node_ok)
            keys = np.where(outcome.passing, group_keys, keys)
            owner[outcome.passing] = len(groups)
        groups.append((request, outcome))
    considered = int(base.sum())
    passed = int((keys != NO_KEY).sum())
    tries = 0
    failures: list[tuple[int, str | _Infeasible]] = []
    while len(keys):  # an empty fleet: no host to try, the diagnosis says 0/0
        best = int(np.argmin(keys))
        if keys[best] == NO_KEY:
            break
        if options.max_candidates is not None and tries >= options.max_candidates:
            rest = np.flatnonzero(keys != NO_KEY)
            _add_untried(reasons, fleet, rest, options.max_candidates)
            break
        tries += 1
        score = int(keys[best]) >> 32
        keys[best] = NO_KEY
        request, outcome = groups[int(owner[best])]
        attempt = _attempt(fleet, best, request, outcome, options, instance)
        if isinstance(attempt, str | _Infeasible):
            failures.append((best, attempt))
            continue
        config, updated, detail = attempt
        rows: list[ExplainRow] = []
        if options.explain:
            rows = _explain(fleet, best, score, request, options, passed, considered, reasons, keys)
            rows.extend(detail)
        lines = [row.line() for row in rows]
        return VmOutcome(config, updated, reasons, considered, passed, lines, rows)
    grouped: dict[str, list[int]] = {}
    for index, failure in failures:
        status = failure if isinstance(failure, str) else failure.status()
        grouped.setdefault(status, []).append(index)
    for status, indices in grouped.items():
        _add_solve_failures(reasons, fleet, indices, status)
    return VmOutcome(None, None, reasons, considered, 0)


def _attempt(
    fleet: FleetIndex,
    index: int,
    request: Request,
    outcome: FilterOutcome,
    options: Options,
    instance: str | None,
) -> tuple[VmConfiguration, ComputeHostDescriptor, list[ExplainRow]] | str | _Infeasible:
    host = fleet.hosts[index]
    view = fleet.view(index)
    layout: Layout | None = None
    shared_choice = None
    detail: list[ExplainRow] = []
    if request.shared is not None:
        ok = outcome.node_ok[-1][index]
        nodes = [n for j, n in enumerate(view.nodes) if j < len(ok) and ok[j]]
        ordered = sorted(
            nodes,
            key=lambda n: (
                (n.shared_spare_vcpus, n.id)
                if options.policy.value != "spread"
                else (-n.shared_spare_vcpus, n.id)
            ),
        )
        for node in ordered:
            pus = shared_pool.choose_pus(node.shared, request.shared)
            if pus is not None:
                shared_choice = (node.id, pus)
                detail.append(
                    ExplainRow(
                        "shared CPUs",
                        f"{request.shared.vcpus} vCPUs over {len(pus)} PUs of NUMA node {node.id}",
                        f"the node had room for {float(node.shared_spare_vcpus):g} more vCPUs: "
                        "(1 - usage) x ratio summed over its shared PUs",
                    )
                )
                break
        if shared_choice is None:
            return "shared"
    needs_model = (
        request.cpu_sets
        or request.vm.pci_devices
        or any(i.mode.value != "vswitch" for i in request.interfaces)
    )
    if needs_model:
        allowed = {
            cs.id: {
                int(fleet.node_id[index, j])
                for j in range(fleet.max_nodes)
                if outcome.node_ok[cs.id][index, j]
            }
            for cs in request.cpu_sets
        }
        solved = solve(view, request, allowed, options)
        if isinstance(solved, SolveFailure):
            if solved.status == "infeasible":
                # named lazily (a few more solves), only if no host fits in the end
                return _Infeasible(view, request, allowed, options)
            return solved.status
        layout = solved
        for cs in request.cpu_sets:
            node = view.node(layout.nodes[cs.id])
            detail.append(
                ExplainRow(
                    f"cpu-set {cs.id}",
                    f"NUMA node {node.id}",
                    f"{len(cs.pairs)} pairs and {len(cs.singles)} unpaired vCPUs ({cs.policy}); "
                    f"the node had {len(node.whole_cores)} free cores with no thread used and "
                    f"{len(node.half_isolated) + len(node.half_busy)} free threads next to a used "
                    "or host-reserved one",
                )
            )
        proof = "proved best" if layout.optimal else "best found within the time limit"
        for kind, value in layout.costs.items():
            detail.append(ExplainRow(f"cost: {kind}", f"{value}", COSTS[kind]))
        detail.append(
            ExplainRow(
                "exact model",
                f"total cost {layout.objective:g}, {proof}",
                "the sum of the costs above, minimised over every layout of the VM on this host",
            )
        )
    try:
        config = build_configuration(
            host, view, request, layout, instance_id(host, request, instance), shared_choice
        )
    except AssignmentError:
        return "internal"  # the model guarantees the ids exist: a bug, not a misfit
    try:
        updated = claim(host, config)
    except ClaimConflictError:
        return "claim"
    return config, updated, detail


def _add_solve_failures(reasons: Reasons, fleet: FleetIndex, hosts: list[int], status: str) -> None:
    status, _, family = status.partition(":")
    phrase = SOLVE_SUMMARY[status]
    message = f"passed the count filter, but the exact model says {status}"
    if family:
        phrase = f"fail the exact check on {FAMILIES[family]}"
        message = (
            "each need fits on its own, but not all together: without the constraints on "
            f"{FAMILIES[family]} the model would be feasible"
        )
    code = {"shared": "shared_cpu"}.get(status, status)
    if status == "shared":
        message = (
            "the shared pool has enough room in total, but no set of its PUs can take the "
            "vCPUs spread evenly within each PU's ratio"
        )

    def build() -> list[Rejection]:
        return [Rejection(fleet.host_ids[i], code, message, phrase, stage="solve") for i in hosts]

    reasons.add(phrase, len(hosts), build)


def _add_untried(reasons: Reasons, fleet: FleetIndex, hosts: np.ndarray, limit: int) -> None:
    phrase = f"were not tried (max_candidates={limit} reached)"

    def build() -> list[Rejection]:
        return [
            Rejection(
                fleet.host_ids[i],
                "not_tried",
                f"passed the filter but max_candidates={limit} hosts were tried first",
                phrase,
                stage="solve",
            )
            for i in hosts.tolist()
        ]

    reasons.add(phrase, len(hosts), build)


def _explain(
    fleet: FleetIndex,
    index: int,
    score: int,
    request: Request,
    options: Options,
    passed: int,
    considered: int,
    reasons: Reasons,
    keys: np.ndarray,
) -> list[ExplainRow]:
    host = fleet.hosts[index]
    others = ", ".join(f"{n} {p}" for p, n in reasons.counts.most_common())
    rows = [
        ExplainRow(
            "placed",
            f"{request.name} on {host.id}",
            f"policy {options.policy}, seed {options.seed}",
        ),
        ExplainRow(
            "filter",
            f"{passed} of {considered} hosts passed",
            f"the others: {others}" if others else "every host passed the count checks",
        ),
        ExplainRow(
            "policy score",
            f"{score} for {host.id}",
            f"{POLICY_SCORES[options.policy.value]}; hosts are tried lowest score first",
        ),
    ]
    for part, points, meaning in score_terms(fleet, index, request, options):
        rows.append(ExplainRow(f"score: {part}", f"{points}", meaning))
    if request.variant:
        rows.append(ExplainRow("variant", request.variant, f"its match applies to {host.id}"))
    runner = int(np.argmin(keys))
    if keys[runner] != NO_KEY:
        rows.append(
            ExplainRow(
                "runner-up",
                f"{fleet.host_ids[runner]}, score {int(keys[runner]) >> 32}",
                f"{int(fleet.free_threads[runner])} of {int(fleet.total_threads[runner])} "
                "eligible threads free",
            )
        )
    return rows


def result_of(outcome: VmOutcome) -> PlacementResult:
    if outcome.configuration is None or outcome.host is None:
        return PlacementResult(
            diagnosis=outcome.reasons.diagnosis(outcome.considered, 0),
            explanation=tuple(outcome.explanation),
            explain_rows=tuple(outcome.rows),
        )
    return PlacementResult(
        configurations=(outcome.configuration,),
        hosts={outcome.host.id: outcome.host},
        explanation=tuple(outcome.explanation),
        explain_rows=tuple(outcome.rows),
    )
