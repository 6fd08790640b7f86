"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any
from urllib.parse import unquote

from fastapi import Depends, FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

from .. import __version__
from ..errors import NfvplaceError
from ..integrations.kubernetes.calls import Door
from ..redaction import url_password
from ..store import Store, default_url
from ..store.parsed import ParsedHosts
from . import k8s_cluster, logs
from .auth import TokenTable, require
from .faults import FaultEpisodes, Readiness
from .live import Placer
from .metrics import Metrics
from .middleware import RequestContext
from .openapi import build_openapi, operation_id
from .placing import Placements
from .problems import (
    ProblemError,
    on_http_error,
    on_nfvplace_error,
    on_problem,
    on_validation_error,
)
from .retention import prune_forever, upkeep_forever
from .routers import (
    capacity,
    convert,
    evaluations,
    health,
    hosts,
    k8s,
    lint,
    placements,
    schemas,
    ui,
)
from .routers.hosts import report
from .settings import EVALUATIONS_PATH, Settings, resolve_tokens
from .workers import SLOT_ENV

SETTINGS_ENV = "NFVPLACE_SERVICE_SETTINGS"
PLACER_ENV = "NFVPLACE_PLACER"

DESCRIPTION = """Placement of NFV VMs over a persistent inventory of hosts (ETSI GS NFV-PER 001).

Errors are RFC 9457 problem documents (`application/problem+json`) with a stable `code`; see
`docs/errors.md`. Authenticate with `Authorization: Bearer <token>` of a role: `reader`, `placer`,
`host-agent` or `admin`."""


def import_placer(path: str) -> Placer:
    """`"package.module:function"` -> the function."""
    module_name, _, name = path.partition(":")
    function: Placer = getattr(importlib.import_module(module_name), name or "place")
    return function


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The store opened (and migrated), the worker's index read before `/readyz`, and the store's
    upkeep running, for as long as the app serves; then all of it stopped and closed."""
    settings: Settings = app.state.settings
    store = Store.open(settings.db_url or default_url(), migrate=settings.migrate)
    app.state.store = store
    episodes = app.state.episodes
    app.state.readiness = Readiness(store, episodes)
    placements = Placements(
        store,
        app.state.placer,
        app.state.metrics,
        settings.max_attempts,
        app.state.on_index_built,
        settings.placing_threads,
    )
    app.state.placements = placements
    app.state.parsed_hosts = ParsedHosts(store)  # the extender's nodes, kept parsed
    app.state.kube_client, app.state.kube_watch = await run_in_threadpool(
        k8s_cluster.started,
        settings,
        Door(
            store,
            app.state.parsed_hosts,
            settings.unregistered_nodes == "pass",
            settings.nrt_interval_s,
        ),
        partial(report, store),
        os.environ.get(SLOT_ENV, "0") == "0",  # one worker of a server watches
    )
    await run_in_threadpool(placements.live.refresh)  # the index, before /readyz
    upkeep = [
        asyncio.create_task(prune_forever(store, settings.keep_released_s, episodes)),
        asyncio.create_task(upkeep_forever(placements.live, episodes)),
    ]
    try:
        yield
    finally:
        for task in upkeep:
            task.cancel()
        if app.state.kube_watch is not None:
            app.state.kube_watch.stop()
        placements.close()
        store.close()


def create_app(
    settings: Settings,
    *,
    placer: Placer | None = None,
    on_index_built: Callable[[], object] | None = None,
) -> FastAPI:
    """The API over the store named by `settings`; opens (and migrates) it on startup.
    `on_index_built` is called each time the worker's index is built (`nfvplace serve`'s workers
    take the index out of the garbage collector's sight: `workers.keep_out_of_collections`).

    Raises SettingsError when the settings would expose the API (no tokens and not loopback).
    """
    tokens = resolve_tokens(settings)
    public_docs = tokens is None or settings.public_docs
    metrics = Metrics()
    app = FastAPI(
        title="nfvplace",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        # with tokens, the API's description is for callers with a token (`--public-docs` opens it)
        docs_url="/docs" if public_docs else None,
        openapi_url="/openapi.json" if public_docs else None,
        redoc_url=None,
        generate_unique_id_function=operation_id,
    )
    app.state.settings = settings
    app.state.tokens = TokenTable(tokens)
    logs.keep_secret(*(t for role in (tokens or {}).values() for t in role))
    password = url_password(settings.db_url)
    logs.keep_secret(password, unquote(password or ""))
    app.state.metrics = metrics
    app.state.placer = placer or import_placer(settings.placer)
    app.state.on_index_built = on_index_built
    _add_routes(app)
    app.state.episodes = FaultEpisodes()
    app.add_middleware(
        RequestContext,
        metrics=metrics,
        max_body_bytes=settings.max_body_bytes,
        path_limits={EVALUATIONS_PATH: settings.max_evaluation_body_bytes},
        episodes=app.state.episodes,
    )

    def openapi() -> dict[str, Any]:
        return build_openapi(app)

    app.openapi = openapi  # type: ignore[method-assign]
    if not public_docs:
        _private_openapi(app)
    return app


def _add_routes(app: FastAPI) -> None:
    """The routers, and the handlers that turn their errors into problem documents."""
    app.add_exception_handler(ProblemError, on_problem)
    app.add_exception_handler(NfvplaceError, on_nfvplace_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    for module in (
        hosts,
        placements,
        capacity,
        evaluations,
        lint,
        convert,
        schemas,
        health,
        ui,
        k8s,
    ):
        app.include_router(module.router)


def _private_openapi(app: FastAPI) -> None:
    """`/openapi.json` for callers with a reader token (tools send it; a browser's /docs cannot, so
    there is none). The same document is published in the repository as api/openapi.json."""

    @app.get("/openapi.json", include_in_schema=False, dependencies=[Depends(require("reader"))])
    async def private_openapi() -> JSONResponse:
        return JSONResponse(app.openapi())


def app_from_env() -> FastAPI:
    """Factory for uvicorn workers: settings from $NFVPLACE_SERVICE_SETTINGS (set by serve)."""
    from .workers import die_with_master, keep_freed_memory, keep_out_of_collections, pin_if_asked

    die_with_master()
    keep_freed_memory()
    settings = Settings.from_json(os.environ[SETTINGS_ENV])
    logs.configure(settings.log_level)
    cpu = pin_if_asked()
    if cpu is not None:
        logs.note("worker pinned to one CPU", cpu=cpu)
    placer = os.environ.get(PLACER_ENV)
    if placer:
        settings = Settings(**{**settings.__dict__, "placer": placer})
    return create_app(settings, on_index_built=keep_out_of_collections)
