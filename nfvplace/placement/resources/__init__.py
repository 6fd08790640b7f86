"""The resource kinds, one module each, behind one interface (`kind.py`); `KINDS` is the registry.

Every stage of the pipeline loops over `KINDS` in this order, and names no kind: the index's
columns, a host's free resources, the filter's node needs (host checks run in `check_order`), the
exact model, the assignment of ids, the counting model, the relaxation, and claiming and releasing
on a host. Adding a kind is a module and a line here (see docs/adding-a-resource-kind.md).
"""

from __future__ import annotations

from typing import Any

from .cache_ways import CACHE_WAYS
from .capabilities import CAPABILITIES_KIND
from .cpu import CPU
from .devices import DEVICES
from .impact import IMPACT
from .interconnect import INTERCONNECT
from .kind import Kind, ResourceKind
from .memory import MEMORY
from .nics import NICS
from .shared import SHARED_CPUS

KINDS: tuple[ResourceKind[Any, Any], ...] = (
    CAPABILITIES_KIND,
    CPU,
    SHARED_CPUS,
    MEMORY,
    NICS,
    DEVICES,
    INTERCONNECT,
    IMPACT,
    CACHE_WAYS,
)
"""Every resource kind, in the order the stages visit them (it decides which need of a cpu-set is
named first when several fail, and the order of the exact model's constraints)."""

BY_NAME: dict[str, ResourceKind[Any, Any]] = {kind.name: kind for kind in KINDS}


def implementing(hook: str) -> tuple[ResourceKind[Any, Any], ...]:
    """The kinds that implement `hook` (the others keep `Kind`'s default, which does nothing), in
    registry order: a stage that few kinds take part in loops over these alone."""
    return tuple(k for k in KINDS if getattr(type(k), hook) is not getattr(Kind, hook))


__all__ = ["BY_NAME", "KINDS", "Kind", "ResourceKind", "implementing"]
