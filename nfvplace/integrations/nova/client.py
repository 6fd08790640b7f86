"""`POST /v1/evaluations` from a Nova scheduler: the standard library's HTTP, one call per request.

Nova's scheduler has neither httpx nor nfvplace's dependencies; `urllib` is enough for one JSON
POST with a bearer token and a timeout. Every failure is one `EvaluationError` whose message says
what happened in a line (the scheduler logs it once, never as a traceback): the service away or
slow, an answer that is not one, or the request refused (a 4xx with the service's own words).

A scheduler asks about up to `max_placement_results` hosts (1,000 by default) at each request, and
few of them changed since the last one. Each host goes by its id and the digest of its CHD
(`{"id", "ref"}`) once the service has it; a host the service has not seen under that digest goes
in full (`{"id", "ref", "chd"}`), and the body is gzip-compressed. The service keeps what it was
sent by digest; one it no longer holds (restarted, another worker, forgotten) is named in a 409,
and the request is sent again with those hosts in full. A cold request whose hosts in full would
outgrow `CHUNK_BYTES` is preceded by requests of those hosts in parts (their answers are kept by
the service and serve the request itself).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import threading
import urllib.error
import urllib.request
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PATH = "/v1/evaluations"
UNKNOWN_REF = "nfvplace.service.unknown_host_ref"
CHUNK_BYTES = 8 * 1024 * 1024  # hosts in full per request, before compression
KEPT_REFS = 16384  # digests the service is believed to hold

TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]+")
"""A bearer token (RFC 6750 b64token), as the service's tokens file holds them."""


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


def digest(chd: dict[str, Any]) -> tuple[str, bytes]:
    """A CHD's digest (sha256 of its canonical JSON, id aside) and that JSON: what the service
    checks a host sent in full against, and keeps it by."""
    text = json.dumps(
        {k: v for k, v in chd.items() if k != "id"}, sort_keys=True, separators=(",", ":")
    ).encode()
    return hashlib.sha256(text).hexdigest(), text


class _Refs:
    """The digests the service is believed to hold (the least recently used forgotten first)."""

    def __init__(self, size: int = KEPT_REFS) -> None:
        self.size = size
        self.kept: OrderedDict[str, None] = OrderedDict()
        self.lock = threading.Lock()

    def __contains__(self, ref: object) -> bool:
        with self.lock:
            return ref in self.kept

    def add(self, refs: Iterable[str]) -> None:
        with self.lock:
            for ref in refs:
                self.kept[ref] = None
                self.kept.move_to_end(ref)
            while len(self.kept) > self.size:
                self.kept.popitem(last=False)

    def forget(self, refs: Iterable[str]) -> None:
        with self.lock:
            for ref in refs:
                self.kept.pop(ref, None)


@dataclass(frozen=True)
class EvaluationClient:
    url: str
    token_file: str | None = None
    timeout: float = 2.0
    dialect: str = "openstack-flavor"
    policy: str = "pack"
    refs: _Refs = field(default_factory=_Refs, compare=False, repr=False)

    def _token(self) -> str | None:
        """The bearer token, read at each call (a rotated token file is picked up). A file that
        is not one token (the service's tokens file given by mistake) is refused by its shape,
        never quoted."""
        if not self.token_file:
            return None
        try:
            text = Path(self.token_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise EvaluationError(f"cannot read token_file {self.token_file}: {reason}") from None
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if len(lines) > 1 or (lines and not TOKEN.fullmatch(lines[0])):
            raise EvaluationError(
                f"token_file {self.token_file} is not one token ({len(lines)} lines; a token is "
                "letters, digits and -._~+/= on one line): put the reader token alone in it"
            )
        return lines[0] if lines else None

    def evaluate(self, vm: dict[str, Any], hosts: list[dict[str, Any]]) -> list[EvaluatedHost]:
        """Every host's answer, in the order given."""
        return self.evaluate_sent(vm, [(str(h["id"]), *digest(h)) for h in hosts])

    def evaluate_sent(
        self, vm: dict[str, Any], hosts_in: list[tuple[str, str, bytes]]
    ) -> list[EvaluatedHost]:
        """Every host's answer, in the order given: hosts as (id, digest, canonical JSON)."""
        unknown = [h for h in hosts_in if h[1] not in self.refs]
        for part in _parts(unknown, CHUNK_BYTES):
            if len(part) < len(unknown):  # a cold request in parts: the service keeps each
                self._post(vm, part, {ref for _, ref, _ in part})
                self.refs.add(ref for _, ref, _ in part)
        inline = {ref for _, ref, _ in hosts_in if ref not in self.refs}
        try:
            data = self._post(vm, hosts_in, inline)
        except _UnknownRefsError as exc:  # the service no longer holds these: once more, in full
            self.refs.forget(exc.refs)
            try:
                data = self._post(vm, hosts_in, inline | set(exc.refs))
            except _UnknownRefsError:  # another worker answered: every host in full
                data = self._post(vm, hosts_in, {ref for _, ref, _ in hosts_in})
        self.refs.add(ref for _, ref, _ in hosts_in)
        return _answers(data, len(hosts_in))

    def _post(
        self, vm: dict[str, Any], hosts: Sequence[tuple[str, str, bytes]], inline: set[str]
    ) -> Any:
        items = [
            b'{"id":%s,"ref":"%s"%s}'
            % (json.dumps(host).encode(), ref.encode(), b',"chd":' + text if ref in inline else b"")
            for host, ref, text in hosts
        ]
        head = {"vm": vm, "dialect": self.dialect, "policy": self.policy, "configurations": False}
        body = json.dumps(head, separators=(",", ":")).encode()[:-1] + b',"hosts":['
        body += b",".join(items) + b"]}"
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Content-Encoding": "gzip",
        }
        token = self._token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(
            self.url.rstrip("/") + PATH,
            data=gzip.compress(body, compresslevel=1),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 409:
                _raise_unknown(exc)
            raise EvaluationError(_problem(exc), refused=exc.code == 422) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EvaluationError(f"{self.url} unreachable: {reason}") from None
        except ValueError:  # its text may quote the request (a header), never the answer alone
            raise EvaluationError(f"{self.url} answered something that is not JSON") from None


class _UnknownRefsError(Exception):
    def __init__(self, refs: list[str]) -> None:
        super().__init__(f"{len(refs)} hosts unknown to the service")
        self.refs = refs


def _raise_unknown(exc: urllib.error.HTTPError) -> None:
    """A 409 naming the digests the service does not hold raises `_UnknownRefsError`; another 409 is an
    EvaluationError."""
    try:
        problem = json.loads(exc.read())
    except (ValueError, OSError):
        problem = {}
    if not isinstance(problem, dict):
        problem = {}
    refs = problem.get("refs")
    if problem.get("code") == UNKNOWN_REF and isinstance(refs, list):
        raise _UnknownRefsError([str(r) for r in refs]) from None
    raise EvaluationError(f"HTTP 409 {problem.get('detail', exc.reason)}") from None


def _parts(hosts: list[tuple[str, str, bytes]], size: int) -> list[list[tuple[str, str, bytes]]]:
    """Hosts in parts of at most `size` bytes of CHD each (at least one host per part)."""
    parts: list[list[tuple[str, str, bytes]]] = [[]]
    total = 0
    for host in hosts:
        if parts[-1] and total + len(host[2]) > size:
            parts.append([])
            total = 0
        parts[-1].append(host)
        total += len(host[2])
    return parts if parts[0] else []


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
