"""Liveness, readiness (database reachable) and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ... import errors
from ..deps import MetricsDep
from ..problems import ProblemError
from .common import problems

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, Any]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", responses=problems(503))
async def readyz(request: Request) -> dict[str, Any]:
    """The database is reachable."""
    store = getattr(request.app.state, "store", None)
    if store is None:
        raise ProblemError(503, errors.SERVICE_UNAVAILABLE, "store not open yet")
    try:
        await run_in_threadpool(store.ping)
    except Exception as exc:
        raise ProblemError(
            503, errors.SERVICE_UNAVAILABLE, f"database unreachable: {type(exc).__name__}"
        ) from exc
    return {"status": "ready"}


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}},
)
def metrics(metrics: MetricsDep) -> Response:
    """Prometheus metrics: latency, placements by outcome, no-fit reasons, conflicts."""
    return Response(metrics.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")
