"""Liveness, readiness (the database accepts a write) and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ... import errors
from ..deps import MetricsDep
from ..faults import Readiness
from ..problems import ProblemError
from .common import problems

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, Any]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", responses=problems(503))
async def readyz(request: Request) -> dict[str, Any]:
    """The database accepts a write (probed at most every 2 s): 503 while it is unreachable, its
    disk is full or it is read-only."""
    readiness: Readiness | None = getattr(request.app.state, "readiness", None)
    if readiness is None:
        raise ProblemError(503, errors.SERVICE_UNAVAILABLE, "store not open yet")
    request.state.store_used = True
    error = await readiness.check()
    if error is None:
        return {"status": "ready"}
    fault = readiness.store.fault(error)
    if fault is None:
        raise ProblemError(
            503, errors.SERVICE_UNAVAILABLE, f"the database check failed: {type(error).__name__}"
        ) from error
    request.app.state.episodes.fault(fault)
    raise ProblemError(
        503, fault.code, fault.detail, headers={"Retry-After": str(fault.retry_after_s)}
    ) from error


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}},
)
def metrics(metrics: MetricsDep) -> Response:
    """Prometheus metrics: latency, placements by outcome, no-fit reasons, conflicts."""
    return Response(metrics.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")
