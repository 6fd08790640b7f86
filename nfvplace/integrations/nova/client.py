"""`POST /v1/evaluations` from a Nova scheduler: the standard library's HTTP, one call per request.

Nova's scheduler has neither httpx nor nfvplace's dependencies; `urllib` is enough for one JSON
POST with a bearer token and a timeout. Every failure is one `EvaluationError` whose message says
what happened in a line (the scheduler logs it once, never as a traceback): the service away or
slow, an answer that is not one, or the request refused (a 4xx with the service's own words).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PATH = "/v1/evaluations"


class EvaluationError(Exception):
    """The service gave no usable answer; `refused` when it refused the request itself (422: the
    VM cannot be placed as written, on any host)."""

    def __init__(self, message: str, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


@dataclass(frozen=True)
class EvaluatedHost:
    host: str
    fits: bool
    score: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class EvaluationClient:
    url: str
    token_file: str | None = None
    timeout: float = 2.0
    dialect: str = "openstack-flavor"
    policy: str = "pack"

    def _token(self) -> str | None:
        """The bearer token, read at each call (a rotated token file is picked up)."""
        if not self.token_file:
            return None
        try:
            return Path(self.token_file).read_text(encoding="utf-8").strip() or None
        except OSError as exc:
            raise EvaluationError(f"cannot read token_file {self.token_file}: {exc}") from exc

    def evaluate(self, vm: dict[str, Any], hosts: list[dict[str, Any]]) -> list[EvaluatedHost]:
        """Every host's answer, in the order given."""
        body = {"vm": vm, "dialect": self.dialect, "policy": self.policy, "hosts": hosts}
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        token = self._token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(
            self.url.rstrip("/") + PATH,
            data=json.dumps(body, separators=(",", ":")).encode(),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise EvaluationError(_problem(exc), refused=exc.code == 422) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EvaluationError(f"{self.url} unreachable: {reason}") from None
        except ValueError as exc:
            raise EvaluationError(
                f"{self.url} answered something that is not JSON: {exc}"
            ) from None
        return _answers(data, len(hosts))


def _problem(exc: urllib.error.HTTPError) -> str:
    """`422 nfvplace.input.invalid: VM has lint errors (NFV105 ...)` from a problem document."""
    try:
        problem = json.loads(exc.read())
    except (ValueError, OSError):
        return f"HTTP {exc.code} {exc.reason}"
    findings = [
        f"{f.get('rule', '')} {f.get('path') or f.get('pointer', '')}: {f.get('message', '')}"
        for f in problem.get("findings") or ()
        if isinstance(f, dict) and f.get("severity", "error") == "error"
    ]
    findings += [
        f"{i.get('path', '')}: {i.get('message', '')}"
        for i in problem.get("issues") or ()
        if isinstance(i, dict)
    ]
    findings = findings[:3]
    detail = f"{problem.get('code', '')}: {problem.get('detail', problem.get('title', ''))}"
    return f"HTTP {exc.code} {detail}" + (f" ({'; '.join(findings)})" if findings else "")


def _answers(data: Any, count: int) -> list[EvaluatedHost]:
    hosts = data.get("hosts") if isinstance(data, dict) else None
    if not isinstance(hosts, list) or len(hosts) != count:
        raise EvaluationError(f"the answer does not hold {count} hosts")
    try:
        return [
            EvaluatedHost(
                str(h["host"]), bool(h["fits"]), int(h["score"]), tuple(h.get("reasons") or ())
            )
            for h in hosts
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise EvaluationError(f"the answer is not an evaluation: {exc}") from None
