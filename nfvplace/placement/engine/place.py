"""`place_vm`: the pipeline for one VM Descriptor (filter -> rank -> exact model -> ids -> claim)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.vmd import VmDescriptor
from ..index import FleetIndex
from ..index.pending import ClaimedHosts, HostClaim
from ..options import Options
from ..reasons import Reason
from ..request import Request, build_request
from ..resources.base import BoolArray, IntArray
from ..result import ExplainRow, PlacementResult, Rejection
from .attempt import Claimed, Infeasible, Refused, attempt
from .explain import Reasons
from .filter import FilterOutcome, run_filter
from .policies import POLICY_SCORES, host_keys, score_terms
from .policies.measures import leading
from .variants import split

NO_KEY = np.iinfo(np.int64).max


@dataclass
class VmOutcome:
    configuration: VmConfiguration | None
    made: HostClaim | ComputeHostDescriptor | None  # the host with it claimed (maybe pending)
    reasons: Reasons
    considered: int
    passed: int
    explanation: list[str] = field(default_factory=list)
    rows: list[ExplainRow] = field(default_factory=list)

    @property
    def host(self) -> ComputeHostDescriptor | None:
        return self.made.host() if isinstance(self.made, HostClaim) else self.made


@dataclass
class Ranked:
    """The hosts that passed the filter, by policy key (lower first), with the request of the
    variant that applies to each."""

    groups: list[tuple[Request, FilterOutcome]]
    keys: IntArray  # NO_KEY: did not pass
    owner: IntArray  # index into `groups` (of a host with a key; 0 for the others)


def rank(
    fleet: FleetIndex, vm: VmDescriptor, options: Options, consider: BoolArray, reasons: Reasons
) -> Ranked:
    """Filter every variant of `vm` on the hosts it applies to, and key the hosts that pass."""
    ranked = Ranked([], np.empty(0, dtype=np.int64), np.zeros(len(fleet), np.intp))
    for descriptor, variant, mask in split(fleet, vm):
        request = build_request(descriptor, variant)
        outcome = run_filter(fleet, request, options, mask & consider)
        reasons.add_outcome(outcome)
        if not ranked.groups:
            # the first variant (most requests have no other): the policy's keys, a new array,
            # with NO_KEY written in place where no host passed
            if outcome.passing.any():
                ranked.keys = host_keys(fleet, request, options, outcome.node_ok)
                ranked.keys[~outcome.passing] = NO_KEY
            else:
                ranked.keys = np.full(len(fleet), NO_KEY, dtype=np.int64)
        else:
            new = outcome.passing & (ranked.keys == NO_KEY)
            if new.any():
                keys = host_keys(fleet, request, options, outcome.node_ok)
                ranked.keys = np.where(new, keys, ranked.keys)
                ranked.owner[new] = len(ranked.groups)  # the first group's hosts are 0 already
        ranked.groups.append((request, outcome))
    return ranked


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
    ranked = rank(fleet, vm, options, base, reasons)
    keys = ranked.keys
    considered = int(np.count_nonzero(base))
    passed = int(np.count_nonzero(keys != NO_KEY))
    tries = 0
    failures: list[tuple[int, Refused | Infeasible]] = []
    while len(keys):  # an empty fleet: no host to try, the diagnosis says 0/0
        best = int(np.argmin(keys))
        if keys[best] == NO_KEY:
            break
        if options.max_candidates is not None and tries >= options.max_candidates:
            add_untried(reasons, fleet, np.flatnonzero(keys != NO_KEY), options.max_candidates)
            break
        tries += 1
        score = int(keys[best]) >> 32
        keys[best] = NO_KEY
        request, outcome = ranked.groups[int(ranked.owner[best])]
        result = attempt(fleet, best, request, outcome, options, instance, options.explain)
        if not isinstance(result, Claimed):
            failures.append((best, result))
            continue
        rows: list[ExplainRow] = []
        if options.explain:
            rows = _explain(fleet, best, score, request, options, passed, considered, reasons, keys)
            rows.extend(result.rows)
        lines = [row.line() for row in rows]
        return VmOutcome(
            result.configuration, result.made, reasons, considered, passed, lines, rows
        )
    add_failures(reasons, fleet, failures)
    return VmOutcome(None, None, reasons, considered, 0)


def add_failures(
    reasons: Reasons, fleet: FleetIndex, failures: list[tuple[int, Refused | Infeasible]]
) -> None:
    """Record the hosts the exact stage refused, grouped by refusal (infeasible ones named now)."""
    grouped: dict[Refused, list[int]] = {}
    for index, failure in failures:
        named = failure.refusal() if isinstance(failure, Infeasible) else failure
        grouped.setdefault(named, []).append(index)
    for named, indices in grouped.items():

        def build(named: Refused = named, indices: list[int] = indices) -> list[Rejection]:
            return [
                Rejection(
                    fleet.host_ids[i], named.reason, named.message, named.phrase, stage="solve"
                )
                for i in indices
            ]

        reasons.add(named.phrase, len(indices), build)


def add_untried(reasons: Reasons, fleet: FleetIndex, hosts: np.ndarray, limit: int) -> None:
    phrase = f"were not tried (max_candidates={limit} reached)"

    def build() -> list[Rejection]:
        return [
            Rejection(
                fleet.host_ids[i],
                Reason.not_tried,
                f"passed the filter but max_candidates={limit} hosts were tried first",
                phrase,
                stage="solve",
            )
            for i in hosts.tolist()
        ]

    reasons.add(phrase, len(hosts), build)


def _explain(
    fleet: FleetIndex,
    position: int,
    score: int,
    request: Request,
    options: Options,
    passed: int,
    considered: int,
    reasons: Reasons,
    keys: np.ndarray,
) -> list[ExplainRow]:
    host = fleet.host_ids[position]
    others = ", ".join(f"{n} {p}" for p, n in reasons.counts.most_common())
    rows = [
        ExplainRow(
            "placed",
            f"{request.name} on {host}",
            f"policy {options.policy}, seed {options.seed}",
        ),
        ExplainRow(
            "filter",
            f"{passed} of {considered} hosts passed",
            f"the others: {others}" if others else "every host passed the count checks",
        ),
        ExplainRow(
            "policy score",
            f"{score} for {host}",
            f"{POLICY_SCORES[options.policy.value]}; hosts are tried lowest score first",
        ),
    ]
    for part, points, meaning in score_terms(fleet, position, request, options):
        rows.append(ExplainRow(f"score: {part}", f"{points}", meaning))
    if request.variant:
        rows.append(ExplainRow("variant", request.variant, f"its match applies to {host}"))
    runner = int(np.argmin(keys))
    if keys[runner] != NO_KEY:
        lead = leading(fleet)
        rows.append(
            ExplainRow(
                "runner-up",
                f"{fleet.host_ids[runner]}, score {int(keys[runner]) >> 32}",
                f"{int(lead.free[runner])} of {int(lead.total[runner])} {lead.unit} free",
            )
        )
    return rows


def result_of(outcome: VmOutcome) -> PlacementResult:
    if outcome.configuration is None or outcome.made is None:
        return PlacementResult(
            diagnosis=outcome.reasons.diagnosis(outcome.considered, 0),
            explanation=tuple(outcome.explanation),
            explain_rows=tuple(outcome.rows),
        )
    return PlacementResult(
        configurations=(outcome.configuration,),
        hosts=ClaimedHosts({outcome.configuration.host: outcome.made}),
        explanation=tuple(outcome.explanation),
        explain_rows=tuple(outcome.rows),
    )
