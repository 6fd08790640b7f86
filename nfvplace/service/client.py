"""A small client of `nfvplace serve` for the command line and host agents (standard library only:
a plain `pip install nfvplace` has it).

It sends JSON with a bearer token and answers `Reply(status, headers, body)`. Database faults are
waited out as the service asks (503 with `Retry-After`), and a broken connection is retried, for
requests that are safe to send again: `GET`, `PUT`, `DELETE`, and a `POST` with an
`Idempotency-Key`. Nothing else is retried: a caller never places twice by accident.
"""

from __future__ import annotations

import http.client
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from json import dumps, loads
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from .. import errors
from ..errors import Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..redaction import is_token, read_token

__all__ = ["Client", "Reply", "read_token", "token_from"]

SAFE_AGAIN = ("GET", "PUT", "DELETE")
MAX_WAIT_S = 30.0  # the longest `Retry-After` honoured at once


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Mapping[str, str]
    body: Any  # the JSON answer (a problem document for an error), None when there is none

    @property
    def ok(self) -> bool:
        return self.status < 400

    @property
    def problem(self) -> str:
        """`[code] detail` of a problem document (the status alone otherwise)."""
        if isinstance(self.body, Mapping) and "code" in self.body:
            return f"[{self.body['code']}] {self.body.get('detail', '')}"
        return f"HTTP {self.status}"


@dataclass
class Client:
    """Requests to one `nfvplace serve` (`server` is its base URL, e.g. http://host:8080)."""

    server: str
    token: str | None = None
    timeout: float = 30.0
    attempts: int = 6  # tries of a request that is safe to send again
    sleep: Any = field(default=time.sleep, repr=False)  # tests pass their own

    def __post_init__(self) -> None:
        parts = urlsplit(self.server)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise NfvplaceError(
                errors.USAGE_INVALID_OPTION,
                f"--server {self.server!r} is not an http(s) URL",
                issues=(Issue("not a URL", path="--server", hint="e.g. http://127.0.0.1:8080"),),
            )
        self.server = self.server.rstrip("/")

    def put_host(self, chd: ComputeHostDescriptor) -> Reply:
        """Register or replace a host (`PUT /v1/hosts/{id}`, the host-agent role)."""
        body = chd.model_dump_json(by_alias=True, exclude_none=True).encode()
        return self.request("PUT", f"/v1/hosts/{quote(chd.id, safe='')}", body=body)

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Send a request (`body` as it is, or `json` serialised); 503 and broken connections
        are tried again when that is safe."""
        if json is not None:
            body = dumps(json).encode()
        sent = {"Accept": "application/json", **(headers or {})}
        if body is not None:
            sent.setdefault("Content-Type", "application/json")
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        again = method in SAFE_AGAIN or "Idempotency-Key" in sent
        for attempt in range(1, self.attempts + 1):
            last = attempt == self.attempts or not again
            try:
                reply = self._once(method, path, body, sent)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                if last:
                    raise self._unreachable(exc) from exc
                self.sleep(min(0.2 * 2**attempt, MAX_WAIT_S))
                continue
            if reply.status != 503 or last:
                return reply
            wait = reply.headers.get("retry-after", "1")
            self.sleep(min(float(wait) if wait.isdigit() else 1.0, MAX_WAIT_S))
        raise AssertionError("unreachable")  # the loop returns or raises on its last attempt

    def _once(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        request = urllib.request.Request(
            self.server + path, data=body, headers=headers, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return _reply(answer.status, answer.headers, answer.read())
        except urllib.error.HTTPError as answer:
            with answer:
                return _reply(answer.code, answer.headers, answer.read())

    def _unreachable(self, exc: BaseException) -> NfvplaceError:
        reason = getattr(exc, "reason", None) or exc
        return NfvplaceError(
            errors.CLIENT_UNREACHABLE,
            f"cannot reach {self.server}: {reason}",
            issues=(Issue("no answer", path="--server", hint="check the URL and the server"),),
        )


def _reply(status: int, headers: Any, raw: bytes) -> Reply:
    lowered = {k.lower(): v for k, v in headers.items()}
    try:
        body = loads(raw) if raw else None
    except ValueError:
        body = raw.decode("utf-8", "replace")
    return Reply(status, lowered, body)


def token_from(path: Path | None) -> str | None:
    """The token of `--token-file`, else of $NFVPLACE_TOKEN (None: no token: `--no-auth`)."""
    if path is not None:
        return read_token(path)
    token = os.environ.get("NFVPLACE_TOKEN", "").strip()
    if token and not is_token(token):
        raise NfvplaceError(
            errors.USAGE_INVALID_OPTION,
            "$NFVPLACE_TOKEN is not one bearer token",
            issues=(Issue("not one token", hint="set it to one token, nothing else"),),
        )
    return token or None
