"""RFC 9457 problem details (application/problem+json) with a stable `code`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic_core import to_json
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import errors
from ..errors import NfvplaceError
from ..models.validation import plain

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "https://nfvplace.dev/errors/"

TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Content too large",
    415: "Unsupported media type",
    422: "Unprocessable content",
    500: "Internal server error",
    503: "Service unavailable",
}

STATUS_CODES = {
    404: errors.SERVICE_NOT_FOUND,
    405: errors.SERVICE_METHOD_NOT_ALLOWED,
    401: errors.SERVICE_UNAUTHORIZED,
    403: errors.SERVICE_FORBIDDEN,
}


class ProblemError(Exception):
    """An answer that is a problem document; raise it from routes and dependencies."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        extra: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        last: bytes | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})
        self.last = last  # JSON rendered already: see `Spliced`


def problem_body(
    status: int, code: str, detail: str, request: Request | None, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": TYPE_BASE + code,
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "code": code,
    }
    if request is not None:
        body["instance"] = request.url.path
        request_id = getattr(request.state, "request_id", None)
        if request_id:
            body["request_id"] = request_id
    body.update(extra)
    return body


@dataclass(frozen=True)
class Spliced:
    """A document whose last value's last value is an empty list, and the JSON of the items that
    fill it, comma separated (a 409 no_fit's rejections, joined from JSON kept per host:
    `refusals`)."""

    document: dict[str, Any]
    last: bytes


def spliced_json(content: Spliced) -> bytes:
    text = to_json(content.document, inf_nan_mode="null")
    closing = len(text) - len(text.rstrip(b"}"))
    if not text[:-closing].endswith(b"[]"):
        raise ValueError("the document's last value does not end with an empty list")
    at = len(text) - closing - 1  # between the empty list's brackets
    return b"".join((text[:at], content.last, text[at:]))  # the long list copied once


class ProblemResponse(JSONResponse):
    """A problem document, rendered by pydantic-core (Rust) as placements' answers are
    (`routers.common.FastJSONResponse`): a 409 no_fit carries a rejection per host."""

    media_type = PROBLEM_JSON

    def render(self, content: Any) -> bytes:
        if isinstance(content, Spliced):
            return spliced_json(content)
        return to_json(content, inf_nan_mode="null")  # JSON has no NaN


def problem_response(
    request: Request | None,
    status: int,
    code: str,
    detail: str,
    headers: Mapping[str, str] | None = None,
    last: bytes | None = None,
    **extra: Any,
) -> JSONResponse:
    body = problem_body(status, code, detail, request, **extra)
    return ProblemResponse(
        body if last is None else Spliced(body, last),
        status_code=status,
        media_type=PROBLEM_JSON,
        headers=dict(headers or {}),
    )


def error_status(error: NfvplaceError) -> int:
    """The status of the code in THE table (`errors.CODES`): e.g. a claim conflict is 409."""
    status = errors.http_status(error.code)
    return status if status in TITLES else 422


def issues_of(error: NfvplaceError) -> list[dict[str, Any]]:
    return [
        {"path": i.path, "message": i.message, "line": i.line, "hint": i.hint} for i in error.issues
    ]


async def on_problem(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ProblemError)
    return problem_response(
        request, exc.status, exc.code, exc.detail, exc.headers, exc.last, **exc.extra
    )


async def on_nfvplace_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, NfvplaceError)
    return problem_response(
        request, error_status(exc), exc.code, exc.message, issues=issues_of(exc)
    )


async def on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = STATUS_CODES.get(exc.status_code, errors.SERVICE_INVALID_REQUEST)
    return problem_response(request, exc.status_code, code, str(exc.detail), exc.headers)


async def on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    issues = [
        {
            "path": ".".join(str(p) for p in err.get("loc", ())),
            "message": plain(err)[0],
        }
        for err in exc.errors()
    ]
    return problem_response(
        request, 422, errors.SERVICE_INVALID_REQUEST, "invalid request", issues=issues
    )
