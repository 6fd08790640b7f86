"""Placement options (the `**policy` keywords of `place`) and their validation."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .. import errors
from ..errors import Issue, NfvplaceError


class Policy(StrEnum):
    pack = "pack"
    spread = "spread"
    least_fragmentation = "least-fragmentation"


class ProcessorMatch(StrEnum):
    """How far a host's processor may be from the model the VM was sized on."""

    exact = "exact"  # the same model or one of `compatible_models`
    # ... or the same vendor and line at a generation no older than the reference's (an unknown
    # model: the same family name, e.g. "intel xeon gold"), at >= the reference frequency
    family = "family"
    any = "any"  # model not checked (vendor, flags and frequency still are)


@dataclass(frozen=True, slots=True)
class Options:
    policy: Policy = Policy.pack
    seed: int = 0
    explain: bool = False
    max_candidates: int | None = None  # hosts given to the exact solver; None: until one fits
    processor_match: ProcessorMatch = ProcessorMatch.family
    frequency_scaling: bool = False  # accept slower same-vendor processors (clause 8.2.2.5)
    min_frequency_ratio: float = 0.75  # ... down to this share of the reference frequency
    time_limit_s: float = 5.0  # per CP-SAT solve
    instance: str | None = None  # instance id (owner); default "<vm>-<k>"
    search_limit_s: float = 10.0  # joint placement (VNF, batch): time for the whole search


def _invalid(message: str, field: str, hint: str) -> NfvplaceError:
    return NfvplaceError(
        errors.PLACEMENT_INVALID_POLICY,
        message,
        issues=(Issue(message, path=field, hint=hint),),
    )


DEFAULTS = Options()
"""What `parse_options()` gives with no keyword (a placement loop's every call): one frozen value."""


def parse_options(**kwargs: object) -> Options:
    """Validate `place` keywords; unknown names or values raise `nfvplace.placement.invalid_policy`."""
    if not kwargs:
        return DEFAULTS
    known = set(Options.__dataclass_fields__)
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise _invalid(
            f"unknown placement option(s): {', '.join(unknown)}",
            unknown[0],
            f"use one of {', '.join(sorted(known))}",
        )
    values: dict[str, object] = dict(kwargs)
    policy = values.get("policy", Policy.pack)
    try:
        values["policy"] = Policy(str(policy.value if isinstance(policy, StrEnum) else policy))
    except ValueError:
        raise _invalid(
            f"unknown placement policy {policy!r}",
            "policy",
            "use pack, spread or least-fragmentation",
        ) from None
    match = values.get("processor_match", ProcessorMatch.family)
    try:
        values["processor_match"] = ProcessorMatch(str(match))
    except ValueError:
        raise _invalid(
            f"unknown processor_match {match!r}", "processor_match", "use exact, family or any"
        ) from None
    seed = values.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise _invalid(f"seed must be an integer, got {seed!r}", "seed", "e.g. seed=0")
    cand = values.get("max_candidates")
    if cand is not None and (not isinstance(cand, int) or cand < 1):
        raise _invalid(
            f"max_candidates must be a positive integer, got {cand!r}",
            "max_candidates",
            "e.g. max_candidates=16, or None to try every host that passes the filter",
        )
    ratio = values.get("min_frequency_ratio", 0.75)
    if not isinstance(ratio, int | float) or not 0 < float(ratio) <= 1:
        raise _invalid(
            f"min_frequency_ratio must be in (0, 1], got {ratio!r}", "min_frequency_ratio", "0.75"
        )
    limit = values.get("search_limit_s", 10.0)
    if not isinstance(limit, int | float) or isinstance(limit, bool) or not float(limit) > 0:
        raise _invalid(
            f"search_limit_s must be a positive number, got {limit!r}", "search_limit_s", "10"
        )
    return Options(**values)  # type: ignore[arg-type]
