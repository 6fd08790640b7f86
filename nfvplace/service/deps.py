"""Dependency aliases used by the routers (no queries inside routes)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ..store import Store
from .metrics import Metrics
from .placing import Placements


def get_store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def get_placements(request: Request) -> Placements:
    placements: Placements = request.app.state.placements
    return placements


def get_metrics(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


StoreDep = Annotated[Store, Depends(get_store)]
PlacementsDep = Annotated[Placements, Depends(get_placements)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]
