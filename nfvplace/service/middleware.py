"""ASGI middleware: request ids, access logs, latency metrics, request body bound, and the
answer to any exception a route let through (503 for a database fault, 500 for a bug). Every
route, the busiest (`POST /v1/placements`) included, is then found and called by FastAPI's router,
and its exceptions answered by the app's exception handlers."""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from pydantic_core import to_json
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import errors
from ..store import Store
from ..store.faults import classify
from .faults import FaultEpisodes, fault_extra
from .ids import uuid4_hex
from .logs import LOGGER, request_fields_var, request_id_var
from .metrics import Metrics
from .problems import PROBLEM_JSON, problem_body

_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


Endpoint = Callable[[Request], Awaitable[Response]]


def _request_id_and_length(headers: Iterable[tuple[bytes, bytes]]) -> tuple[str, str]:
    """The X-Request-Id and Content-Length headers' values ("" when not sent; the last one when
    sent twice), read without decoding the other headers."""
    given = length = ""
    for name, value in headers:
        if len(name) == 14:
            if name.lower() == b"content-length":
                length = value.decode("latin-1")
        elif len(name) == 12 and name.lower() == b"x-request-id":
            given = value.decode("latin-1")
    return given, length


class RequestContext:
    def __init__(
        self,
        app: ASGIApp,
        metrics: Metrics,
        max_body_bytes: int,
        episodes: FaultEpisodes,
        path_limits: Mapping[str, int] | None = None,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.path_limits = dict(path_limits or {})  # routes sized apart (POST /v1/evaluations)
        self.episodes = episodes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given, length = _request_id_and_length(scope["headers"])
        request_id = given if _SAFE_ID.match(given) else uuid4_hex()
        scope.setdefault("state", {})["request_id"] = request_id
        token = request_id_var.set(request_id)
        fields: dict[str, Any] = {}
        fields_token = request_fields_var.set(fields)
        start = time.perf_counter()
        began = time.monotonic()
        status = 500
        started = False

        async def send_wrapper(message: Message) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                started = True
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (b"x-request-id", request_id.encode("latin-1")),
                ]
            await send(message)

        try:
            await self._route(scope, receive, send_wrapper, length)
        except Exception as exc:
            if started:  # nothing left to say: the server closes the connection
                raise
            # answered here, not re-raised: the connection stays usable (Starlette's last resort
            # answers and then re-raises, and the server drops the keep-alive connection)
            await self._failed(scope, send_wrapper, exc)
        finally:
            self._record(scope, status, time.perf_counter() - start, fields)
            request_fields_var.reset(fields_token)
            request_id_var.reset(token)
        if status < 500 and scope["state"].get("store_used"):
            self.episodes.served(began)

    async def _route(self, scope: Scope, receive: Receive, send: Send, length: str) -> None:
        """A body declared too large is refused; the rest go to the app."""
        limit = self.path_limits.get(scope["path"], self.max_body_bytes)
        if length.isdigit() and int(length) > limit:
            await self._too_large(scope, send, int(length), limit)
        else:
            await self.app(scope, receive, send)

    def _record(self, scope: Scope, status: int, elapsed: float, fields: dict[str, Any]) -> None:
        """The request's latency metric and its one log line."""
        route: Any = scope.get("route")
        template = getattr(route, "path", None) or "unmatched"
        self.metrics.answered(scope["method"], template, str(status), elapsed)
        LOGGER.info(
            "request",
            extra={
                "method": scope["method"],
                "path": scope["path"],
                "route": template,
                "status": status,
                "duration_ms": round(elapsed * 1000, 2),
                **fields,
            },
        )

    async def _failed(self, scope: Scope, send: Send, exc: Exception) -> None:
        """503 with Retry-After for a database fault (one log line per episode), else 500 with
        the traceback in the log (a bug)."""
        store: Store | None = getattr(scope["app"].state, "store", None)
        fault = classify(exc) if store is None else store.fault(exc)
        headers: list[tuple[bytes, bytes]] = []
        if fault is None:
            LOGGER.error("unexpected error", exc_info=exc)
            status, code, detail = (
                500,
                errors.SERVICE_INTERNAL,
                "internal error; see the server log",
            )
        else:
            self.episodes.fault(fault)
            status, code, detail = 503, fault.code, fault.detail
            headers.append((b"retry-after", str(fault.retry_after_s).encode()))
        body = problem_body(
            status,
            code,
            detail,
            None,
            instance=scope["path"],
            request_id=scope["state"]["request_id"],
            **fault_extra(exc),
        )
        await self._send(send, status, body, headers)

    async def _send(
        self, send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]
    ) -> None:
        data = to_json(body)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", PROBLEM_JSON.encode()),
                    (b"content-length", str(len(data)).encode()),
                    *headers,
                ],
            }
        )
        await send({"type": "http.response.body", "body": data})

    async def _too_large(self, scope: Scope, send: Send, length: int, limit: int) -> None:
        body = problem_body(
            413,
            errors.INPUT_TOO_LARGE,
            f"request body is {length} bytes, more than the {limit} allowed",
            None,
            instance=scope["path"],
            request_id=scope["state"]["request_id"],
        )
        await self._send(send, 413, body, [(b"connection", b"close")])
