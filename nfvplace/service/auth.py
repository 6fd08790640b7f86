"""Bearer-token roles: reader < placer, host-agent < admin."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .. import errors
from .problems import ProblemError

GRANTS: dict[str, frozenset[str]] = {
    "reader": frozenset({"reader"}),
    "placer": frozenset({"reader", "placer"}),
    "host-agent": frozenset({"reader", "host-agent"}),
    "admin": frozenset({"reader", "placer", "host-agent", "admin"}),
}

bearer = HTTPBearer(auto_error=False, description="Bearer token of a role (see --tokens)")


class TokenTable:
    """Bearer token -> role; None means --no-auth (everyone is admin)."""

    def __init__(self, roles: Mapping[str, Sequence[str]] | None) -> None:
        self.open = roles is None
        self.entries = [(t, role) for role, tokens in (roles or {}).items() for t in tokens]

    def role_of(self, token: str) -> str | None:
        found = None
        for known, role in self.entries:  # compare every entry: no early exit on a match
            if secrets.compare_digest(known.encode(), token.encode()):
                found = role if found is None or role == "admin" else found
        return found


def admit(table: TokenTable, authorization: str | None, role: str) -> str:
    """The caller's role when the `Authorization` header's bearer token grants `role` (read as
    FastAPI's `HTTPBearer` reads it); ProblemError 401 or 403 otherwise."""
    if table.open:
        return "admin"
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if not (scheme and token) or scheme.lower() != "bearer":
        raise ProblemError(
            401,
            errors.SERVICE_UNAUTHORIZED,
            "a bearer token is required",
            headers={"WWW-Authenticate": "Bearer"},
        )
    caller = table.role_of(token)
    if caller is None:
        raise ProblemError(
            401,
            errors.SERVICE_UNAUTHORIZED,
            "unknown bearer token",
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    if role not in GRANTS[caller]:
        raise ProblemError(
            403, errors.SERVICE_FORBIDDEN, f"role {caller!r} may not do this; needs {role!r}"
        )
    return caller


# What `require` adds to a route's OpenAPI operation, for a route that calls `admit` itself
SECURITY: dict[str, object] = {"security": [{"HTTPBearer": []}]}


def require(role: str) -> Callable[..., Awaitable[str]]:
    """A dependency that admits callers whose token grants `role`; returns the caller's role.
    (`bearer` declares the scheme in the OpenAPI document; the header is read by `admit`.)"""

    # async: nothing here blocks, and a plain function would be run in the thread pool (a thread
    # hop per request, a tenth of the service's time per placement)
    async def check(
        request: Request,
        _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> str:
        table: TokenTable = request.app.state.tokens
        return admit(table, request.headers.get("authorization"), role)

    check.__name__ = f"require_{role.replace('-', '_')}"
    return check
