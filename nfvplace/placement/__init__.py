"""Placement: filter -> rank -> exact model -> exact ids -> claim, over a fleet index.

- `resources/`: one module per resource kind, behind one interface, and the registry of kinds;
- `index/`: the fleet index (each kind's columns) and the one way to build it (`index_of`);
- `engine/`: the single-VM pipeline, every host's answer, and why nothing fits;
- `joint/`: VNF templates and batches, what-if capacity, defragmentation advice.

This module is the engine's door: see docs/placement.md and docs/architecture.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import capacity, evaluate, place, suggest_moves
    from .engine.evaluate import HostEvaluation
    from .index import FleetIndex, index_of
    from .joint.batch import BatchItem
    from .joint.capacity import CapacityReport, HostCapacity
    from .joint.moves import Move, MovesAdvice
    from .options import Options, Policy, ProcessorMatch
    from .reasons import Reason
    from .result import Diagnosis, NoFitError, PlacementResult, Rejection, Unplaced

# public name -> the module that defines it, imported on first use: the kinds (`resources/`) load
# without the engine, so `claims` can loop over them while the engine claims with `claims`
_LAZY = {
    "place": "api",
    "capacity": "api",
    "evaluate": "api",
    "suggest_moves": "api",
    "HostEvaluation": "engine.evaluate",
    "FleetIndex": "index",
    "index_of": "index",
    "BatchItem": "joint.batch",
    "CapacityReport": "joint.capacity",
    "HostCapacity": "joint.capacity",
    "Move": "joint.moves",
    "MovesAdvice": "joint.moves",
    "Options": "options",
    "Policy": "options",
    "ProcessorMatch": "options",
    "Reason": "reasons",
    "Diagnosis": "result",
    "NoFitError": "result",
    "PlacementResult": "result",
    "Rejection": "result",
    "Unplaced": "result",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BatchItem",
    "CapacityReport",
    "Diagnosis",
    "FleetIndex",
    "HostCapacity",
    "HostEvaluation",
    "Move",
    "MovesAdvice",
    "NoFitError",
    "Options",
    "PlacementResult",
    "Policy",
    "ProcessorMatch",
    "Reason",
    "Rejection",
    "Unplaced",
    "capacity",
    "evaluate",
    "index_of",
    "place",
    "suggest_moves",
]
