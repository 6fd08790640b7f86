"""OpenAPI fragments, the JSON response and the lean route class shared by the routers."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic_core import to_json

PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` entries for problem documents."""
    text = {
        401: "No or unknown bearer token",
        403: "The token's role may not do this",
        404: "Not found",
        409: "Conflict",
        413: "Request body too large",
        415: "Unsupported content type",
        422: "Invalid input (with findings)",
        503: "Not ready",
    }
    return {
        status: {
            "description": text.get(status, "Problem"),
            "content": {"application/problem+json": {"schema": PROBLEM_REF}},
        }
        for status in statuses
    }


def body_of(component: str, description: str) -> dict[str, Any]:
    """`openapi_extra=` declaring a JSON (or YAML) request body of a schema component."""
    schema = {"$ref": f"#/components/schemas/{component}"}
    return {
        "requestBody": {
            "required": True,
            "description": description,
            "content": {
                "application/json": {"schema": schema},
                "application/yaml": {"schema": schema},
            },
        }
    }


class FastJSONResponse(JSONResponse):
    """JSON rendered by pydantic-core (Rust): a placement's answer carries every VM Configuration,
    which the standard library's encoder took a tenth of a worker's time to write."""

    def render(self, content: Any) -> bytes:
        if isinstance(content, bytes):  # rendered already (a placement's answer)
            return content
        return to_json(content, inf_nan_mode="null")  # JSON has no NaN


class RequestAloneRoute(APIRoute):
    """A route whose endpoint takes the request alone and returns its response: the router calls
    it as it is, without FastAPI's request handler (which solves parameters and dependencies there
    are none of, and took as long as the router itself: about 50 us a request). Its errors go to
    the app's exception handlers as any route's; the OpenAPI document still describes it from
    what the route declares."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        endpoint: Callable[[Request], Coroutine[Any, Any, Response]] = self.endpoint
        return endpoint
