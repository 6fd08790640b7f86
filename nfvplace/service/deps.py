"""Dependency aliases used by the routers (no queries inside routes). They are `async`: they only
read the app's state, and FastAPI would run plain functions in its thread pool."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ..integrations.kubernetes.calls import Door
from ..store import Store
from ..store.parsed import ParsedHosts
from .metrics import Metrics
from .placing import Placements


async def get_store(request: Request) -> Store:
    request.state.store_used = True  # a request served after a database fault ends the episode
    store: Store = request.app.state.store
    return store


async def get_placements(request: Request) -> Placements:
    request.state.store_used = True
    placements: Placements = request.app.state.placements
    return placements


async def get_parsed_hosts(request: Request) -> ParsedHosts:
    request.state.store_used = True
    hosts: ParsedHosts = request.app.state.parsed_hosts
    return hosts


async def get_door(request: Request) -> Door:
    """The Kubernetes extender's door: the store, its nodes kept parsed, the service's rule for
    nodes without a NodeResourceTopology."""
    request.state.store_used = True
    state = request.app.state
    return Door(state.store, state.parsed_hosts, state.settings.unregistered_nodes == "pass")


async def get_metrics(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


StoreDep = Annotated[Store, Depends(get_store)]
PlacementsDep = Annotated[Placements, Depends(get_placements)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]
ParsedHostsDep = Annotated[ParsedHosts, Depends(get_parsed_hosts)]
DoorDep = Annotated[Door, Depends(get_door)]
