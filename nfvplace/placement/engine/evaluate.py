"""Evaluation: every host's answer for one VM, without claiming (the scheduler plug-ins' door).

A scheduler that decides by itself (Nova's filter scheduler, the Kubernetes scheduler) asks, for the
candidate hosts it holds now: does the VM fit on each, how good is each, and why not. The answer runs
the same filter, ranking and exact model as `place` on every host that passes the filter (not only
until the first fits), and returns per host whether it fits, a score, the reasons it does not, and
the configuration it would get. Nothing is claimed: the caller's hosts are never changed.

`score` is 0-100, higher is better: the policy's host score (`policies.host_keys`, lower is better)
mapped linearly so that the best fitting host gets 100 and the worst 0 (every one 100 when they tie).
Hosts that do not fit score 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ...models.configuration import VmConfiguration
from ...models.vmd import VmDescriptor
from ..index import FleetIndex
from ..options import Options
from ..result import Rejection
from .candidates import Fit, fitting_hosts
from .explain import Reasons

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

    def to_dict(self) -> dict[str, object]:
        return {
            "host": self.host,
            "fits": self.fits,
            "score": self.score,
            "reasons": [r.message for r in self.reasons],
            "configuration": (
                None
                if self.configuration is None
                else self.configuration.model_dump(mode="json", exclude_none=True)
            ),
        }


def _scores(fits: Iterable[Fit]) -> dict[int, int]:
    """Policy scores (lower is better) mapped to 0-100 (higher is better), best fit 100."""
    raw = {fit.index: fit.score for fit in fits}
    if not raw:
        return {}
    best, worst = min(raw.values()), max(raw.values())
    if best == worst:
        return dict.fromkeys(raw, MAX_SCORE)
    span = worst - best
    return {i: round(MAX_SCORE * (worst - s) / span) for i, s in raw.items()}


def evaluate_vm(
    fleet: FleetIndex, vm: VmDescriptor, options: Options
) -> tuple[HostEvaluation, ...]:
    """Every host of `fleet`, in the fleet's order, with its answer for `vm`."""
    reasons = Reasons()
    consider = np.ones(len(fleet), dtype=np.bool_)
    fits = {
        fit.index: fit
        for fit in fitting_hosts(fleet, vm, options, consider, options.instance, reasons)
    }
    scores = _scores(fits.values())
    why: dict[str, list[Rejection]] = {}
    for rejection in reasons.diagnosis(len(fleet), len(fits)).rejections:
        why.setdefault(rejection.host, []).append(rejection)
    out = []
    for i, host in enumerate(fleet.host_ids):
        fit = fits.get(i)
        if fit is None:
            out.append(HostEvaluation(host, False, 0, tuple(why.get(host, ()))))
        else:
            out.append(HostEvaluation(host, True, scores[i], (), fit.configuration))
    return tuple(out)
