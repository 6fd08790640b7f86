"""ASGI middleware: request ids, access logs, latency metrics, request body bound."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import errors
from .logs import LOGGER, request_fields_var, request_id_var
from .metrics import Metrics
from .problems import PROBLEM_JSON, problem_body

_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class RequestContext:
    def __init__(self, app: ASGIApp, metrics: Metrics, max_body_bytes: int) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        given = headers.get("x-request-id", "")
        request_id = given if _SAFE_ID.match(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        token = request_id_var.set(request_id)
        fields: dict[str, Any] = {}
        fields_token = request_fields_var.set(fields)
        start = time.perf_counter()
        status = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (b"x-request-id", request_id.encode("latin-1")),
                ]
            await send(message)

        try:
            length = headers.get("content-length", "")
            if length.isdigit() and int(length) > self.max_body_bytes:
                await self._too_large(scope, send_wrapper, int(length))
            else:
                await self.app(scope, receive, send_wrapper)
        finally:
            elapsed = time.perf_counter() - start
            route: Any = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.latency.labels(scope["method"], template, str(status)).observe(elapsed)
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
            request_fields_var.reset(fields_token)
            request_id_var.reset(token)

    async def _too_large(self, scope: Scope, send: Send, length: int) -> None:
        import json

        body = problem_body(
            413,
            errors.INPUT_TOO_LARGE,
            f"request body is {length} bytes, more than the {self.max_body_bytes} allowed",
            None,
            instance=scope["path"],
            request_id=scope["state"]["request_id"],
        )
        data = json.dumps(body).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", PROBLEM_JSON.encode()),
                    (b"content-length", str(len(data)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": data})
