"""Evaluation: every host's answer for one VM, without claiming (the scheduler plug-ins' door).

A scheduler that decides by itself (Nova's filter scheduler, the Kubernetes scheduler) asks, for the
candidate hosts it holds now: does the VM fit on each, how good is each, and why not. The answer runs
the same filter, ranking and exact model as `place` on every host that passes the filter (not only
until the first fits), and returns per host whether it fits, a score, the reasons it does not, and
the configuration it would get. Nothing is claimed: the caller's hosts are never changed.

`score` is 0-100, higher is better: the policy's host score (`rank`, from `policies.host_keys`, lower
is better) mapped linearly so that the best fitting host gets 100 and the worst 0 (every one 100 when
they tie). Hosts that do not fit score 0.

A host's answer depends on that host alone (its filter checks, its policy score, its exact model):
callers that see the same hosts again (a scheduler's candidates, of which one or two changed since
its last request) may keep answers per host and score them together with `scored`.

A filter reads whether each host fits and its score, never the configuration: `configurations=False`
decides every host with the same filter, ranking and exact model, and stops there: the model is
asked whether a layout exists, not for the best one, and the ids and the claim that the
configuration needs are left out (together about half of a fitting host's cost).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from ...models.configuration import VmConfiguration
from ...models.vmd import VmDescriptor
from ..index import FleetIndex
from ..options import Options
from ..result import Rejection
from .attempt import Infeasible, Refused, Solved, solved
from .candidates import fitting_hosts
from .explain import Reasons
from .place import NO_KEY, add_failures, rank

MAX_SCORE = 100


@dataclass(frozen=True, slots=True)
class HostEvaluation:
    """One host's answer: fits or not, a score (0-100, higher is better), the reasons it does not
    fit (with numbers), and the configuration it would get (nothing claimed)."""

    host: str
    fits: bool
    score: int
    reasons: tuple[Rejection, ...] = ()
    configuration: VmConfiguration | None = None
    rank: int | None = None  # the policy's host score (lower is better); None if it does not fit

    def to_dict(self) -> dict[str, object]:
        return {
            "host": self.host,
            "fits": self.fits,
            "score": self.score,
            "reasons": [r.message for r in self.reasons],
            "configuration": (
                None
                if self.configuration is None
                else self.configuration.model_dump(mode="json", by_alias=True, exclude_none=True)
            ),
        }


def scored(evaluations: Iterable[HostEvaluation]) -> tuple[HostEvaluation, ...]:
    """The evaluations with their `score`: the fitting hosts' ranks (lower is better) mapped to
    0-100 (higher is better), the best 100 and the worst 0; 0 for the others."""
    answers = tuple(evaluations)
    ranks = [a.rank for a in answers if a.fits and a.rank is not None]
    if not ranks:
        return tuple(replace(a, score=0) for a in answers)
    best, worst = min(ranks), max(ranks)
    span = worst - best

    def score(rank: int | None) -> int:
        if rank is None:
            return 0
        return MAX_SCORE if span == 0 else round(MAX_SCORE * (worst - rank) / span)

    return tuple(replace(a, score=score(a.rank) if a.fits else 0) for a in answers)


def evaluate_vm(
    fleet: FleetIndex, vm: VmDescriptor, options: Options, configurations: bool = True
) -> tuple[HostEvaluation, ...]:
    """Every host of `fleet`, in the fleet's order, with its answer for `vm` (without the
    configuration it would get when `configurations` is false)."""
    reasons = Reasons()
    consider = np.ones(len(fleet), dtype=np.bool_)
    fits: dict[int, tuple[VmConfiguration | None, int]]
    if configurations:
        fits = {
            fit.position: (fit.configuration, fit.score)
            for fit in fitting_hosts(fleet, vm, options, consider, options.instance, reasons)
        }
    else:
        fits = _verdicts(fleet, vm, options, consider, reasons)
    why: dict[str, list[Rejection]] = {}
    for rejection in reasons.diagnosis(len(fleet), len(fits)).rejections:
        why.setdefault(rejection.host, []).append(rejection)
    out = []
    for i, host in enumerate(fleet.host_ids):
        fit = fits.get(i)
        if fit is None:
            out.append(HostEvaluation(host, False, 0, tuple(why.get(host, ()))))
        else:
            out.append(HostEvaluation(host, True, 0, (), fit[0], fit[1]))
    return scored(out)


def _verdicts(
    fleet: FleetIndex, vm: VmDescriptor, options: Options, consider: np.ndarray, reasons: Reasons
) -> dict[int, tuple[VmConfiguration | None, int]]:
    """The hosts that take `vm` with their policy score, as `fitting_hosts` finds them (the same
    order, the same refusals recorded), each decided by the exact model without ids or claim."""
    ranked = rank(fleet, vm, options, consider, reasons)
    hosts = np.flatnonzero(ranked.keys != NO_KEY)
    fits: dict[int, tuple[VmConfiguration | None, int]] = {}
    failures: list[tuple[int, Refused | Infeasible]] = []
    for best in hosts[np.lexsort((ranked.keys[hosts],))].tolist():
        request, outcome = ranked.groups[int(ranked.owner[best])]
        found = solved(fleet, best, request, outcome, options, optimize=False)
        if isinstance(found, Solved):
            fits[best] = (None, int(ranked.keys[best]) >> 32)
        else:
            failures.append((best, found))
    add_failures(reasons, fleet, failures)
    return fits
