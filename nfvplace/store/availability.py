"""A host's availability from what its agent reports and the store's live placements (pure).

One derivation, used when an agent reports a host and by the audit: placements the agent already
shows (see `claims.holders`) are released from the report once (their hugepages, memory and
bandwidth are in what the agent counts as used), then every live placement is claimed again with
`claims.claim_what_fits`; what no longer fits is reported as a conflict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..claims import claim_what_fits, holders, release
from ..errors import Issue
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration


@dataclass(frozen=True)
class Derived:
    base: ComputeHostDescriptor  # the report without the store's own placements
    available: ComputeHostDescriptor  # base with every live placement claimed
    conflicts: tuple[tuple[VmConfiguration, Issue], ...]


def derive(reported: ComputeHostDescriptor, live: Sequence[VmConfiguration]) -> Derived:
    """`reported` with the live configurations (in the order given) claimed, each counted once."""
    base = reported
    shown = holders(reported)
    for config in live:
        if config.owner in shown:
            base = release(base, config)
    available = base
    conflicts: list[tuple[VmConfiguration, Issue]] = []
    for config in live:
        available, issues = claim_what_fits(available, config)
        conflicts.extend((config, issue) for issue in issues)
    return Derived(base, available, tuple(conflicts))
