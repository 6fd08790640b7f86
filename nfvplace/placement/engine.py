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
from .explain import Reasons
from .filter import FilterOutcome, run_filter
from .hostview import HostView
from .index import BoolArray, FleetIndex
from .options import Options
from .policies import host_keys
from .request import Request, build_request
from .result import PlacementResult, Rejection
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
    explanation: list[str] = []
    while True:
        best = int(np.argmin(keys))
        if keys[best] == NO_KEY:
            break
        if options.max_candidates is not None and tries >= options.max_candidates:
            rest = np.flatnonzero(keys != NO_KEY)
            _add_untried(reasons, fleet, rest, options.max_candidates)
            break
        tries += 1
        keys[best] = NO_KEY
        request, outcome = groups[int(owner[best])]
        attempt = _attempt(fleet, best, request, outcome, options, instance)
        if isinstance(attempt, str | _Infeasible):
            failures.append((best, attempt))
            continue
        config, updated, detail = attempt
        if options.explain:
            explanation = _explain(fleet, best, request, options, passed, considered, reasons, keys)
            explanation.extend(detail)
        return VmOutcome(config, updated, reasons, considered, passed, explanation)
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
) -> tuple[VmConfiguration, ComputeHostDescriptor, list[str]] | str | _Infeasible:
    host = fleet.hosts[index]
    view = fleet.view(index)
    layout: Layout | None = None
    shared_choice = None
    detail: list[str] = []
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
            pus = shared_pool.choose_pus(node, request.shared)
            if pus is not None:
                shared_choice = (node.id, pus)
                detail.append(
                    f"{request.shared.vcpus} vCPUs float over {len(pus)} shared PUs of NUMA "
                    f"node {node.id} (spare {node.shared_spare_vcpus:g} vCPUs before)"
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
                f"cpu-set {cs.id} -> NUMA node {node.id} ({len(node.whole_cores)} whole free cores, "
                f"{len(node.half_isolated) + len(node.half_busy)} free half cores before; "
                f"{len(cs.pairs)} pairs, {len(cs.singles)} unpaired vCPUs, policy {cs.policy})"
            )
        detail.append(
            f"exact model: objective {layout.objective:g} ({'optimal' if layout.optimal else 'feasible'})"
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
    request: Request,
    options: Options,
    passed: int,
    considered: int,
    reasons: Reasons,
    keys: np.ndarray,
) -> list[str]:
    host = fleet.hosts[index]
    lines = [
        f"placed {request.name} on {host.id} (policy {options.policy}, seed {options.seed})",
        f"{passed}/{considered} hosts passed the filter"
        + (
            "; the others: " + ", ".join(f"{n} {p}" for p, n in reasons.counts.most_common())
            if reasons.counts
            else ""
        ),
    ]
    why = {
        "pack": "the fewest free threads among the hosts that fit (fill used hosts first)",
        "spread": "the largest share of free threads (spread the load)",
        "least-fragmentation": "the tightest fit on one NUMA node (keep large holes whole)",
    }[options.policy.value]
    lines.append(
        f"{host.id} ranked first: {int(fleet.free_threads[index])} of "
        f"{int(fleet.total_threads[index])} eligible threads free; policy {options.policy} "
        f"prefers {why}"
    )
    if request.variant:
        lines.append(f"variant {request.variant} applies to {host.id}")
    runner = int(np.argmin(keys))
    if keys[runner] != NO_KEY:
        lines.append(
            f"runner-up: {fleet.host_ids[runner]} with {int(fleet.free_threads[runner])} of "
            f"{int(fleet.total_threads[runner])} threads free"
        )
    return lines


def result_of(outcome: VmOutcome) -> PlacementResult:
    if outcome.configuration is None or outcome.host is None:
        return PlacementResult(
            diagnosis=outcome.reasons.diagnosis(outcome.considered, 0),
            explanation=tuple(outcome.explanation),
        )
    return PlacementResult(
        configurations=(outcome.configuration,),
        hosts={outcome.host.id: outcome.host},
        explanation=tuple(outcome.explanation),
    )
