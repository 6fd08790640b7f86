"""Placement pipeline (filter -> solve -> explain). Being built under issue 4."""

from __future__ import annotations

from typing import Any


class PlacementResult:
    """Placeholder until the placement engine lands (issue 4)."""


def place(hosts: Any, vm: Any, **policy: Any) -> PlacementResult:
    raise NotImplementedError("placement engine not built yet (issue 4)")
