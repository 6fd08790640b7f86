"""`nfvplace agent`: keep this host's CHD current in a service, claims kept, drift reported.

Every `interval` seconds: discover the host (hwloc + sysfs, as `nfvplace discover`, with the
`--set`/`--defaults` facts), read libvirt's running domains and mark what they hold, read the
inventory's view of the host (`GET /v1/hosts/{id}`), report the drift between the two (log lines
and a metric), then `PUT /v1/hosts/{id}` the CHD. The service keeps its claims across the report
(it re-applies live placements to what the host reports) and lists the claims the report
contradicts, which the agent logs too.

A CHD is sent only when discovery finished and the CHD validated: never half of one. When the
service is away (connection refused, timeout, 5xx) the report is retried with exponential backoff
(1 s, 2 s, 4 s ... at most the interval, with jitter); a refusal (4xx: a bad token, an invalid
CHD) is logged and tried again at the next interval. SIGTERM or SIGINT ends the agent cleanly
(exit 0) at once, between two steps, or while it waits.
"""

from __future__ import annotations

import json
import random
import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import errors
from ..claims import holders
from ..models.chd import ComputeHostDescriptor
from ..redaction import read_token, redact
from .domains import Domain, DomainsUnreadableError, running_domains
from .drift import Drift, drift, known_as, totals, with_domains

HTTP_TIMEOUT_S = 30.0
FIRST_BACKOFF_S = 1.0


class UnreachableError(Exception):
    """The service did not answer (retried with backoff)."""


class RefusedError(Exception):
    """The service answered 4xx (retry at the next interval)."""


@dataclass
class AgentSettings:
    server: str
    token_file: Path
    interval: float = 60.0
    discover: Callable[[], ComputeHostDescriptor] | None = None
    libvirt_xml: Path | None = None
    metrics_file: Path | None = None
    once: bool = False
    log: Callable[[str], None] = print


@dataclass
class AgentState:
    stop: threading.Event = field(default_factory=threading.Event)
    reports: dict[str, int] = field(
        default_factory=lambda: {"ok": 0, "unreachable": 0, "refused": 0}
    )
    libvirt_said: str | None = None  # why libvirt cannot be read, once logged
    secrets: set[str] = field(default_factory=set)  # tokens read: cut out of every line said


def _token(settings: AgentSettings, state: AgentState) -> str:
    """The token, read at each call (a rotated file is picked up); remembered so that no line
    the agent says can carry it."""
    token = read_token(settings.token_file)
    state.secrets.add(token)
    return token


def _call(
    settings: AgentSettings, state: AgentState, method: str, path: str, body: Any = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    token = _token(settings, state)
    request = urllib.request.Request(
        settings.server.rstrip("/") + path,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        if exc.code >= 500:
            raise UnreachableError(f"{method} {path}: HTTP {exc.code}") from None
        try:
            problem = json.loads(exc.read())
        except (ValueError, OSError):
            problem = {}
        return exc.code, problem
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise UnreachableError(f"{settings.server}: {getattr(exc, 'reason', exc)}") from None
    except ValueError as exc:  # an answer that is not JSON (the request itself was checked)
        raise UnreachableError(f"{method} {path}: the answer is not JSON ({exc})") from None


def _domains(settings: AgentSettings, state: AgentState) -> list[Domain] | None:
    try:
        return running_domains(settings.libvirt_xml)
    except DomainsUnreadableError as exc:
        if state.libvirt_said != str(exc):
            settings.log(f"libvirt not read ({exc}): PUs and PCI devices are not compared")
            state.libvirt_said = str(exc)
        return None


def _finding(settings: AgentSettings, item: Drift) -> None:
    settings.log(f"drift [{errors.AGENT_DRIFT}] {item.resource} {item.side}: {item.message}")


def cycle(settings: AgentSettings, state: AgentState) -> None:
    """Discover, compare and report once; raises UnreachableError or RefusedError."""
    assert settings.discover is not None
    domains = _domains(settings, state)
    chd = settings.discover()  # finished and validated, or it raised: nothing half is sent
    if state.stop.is_set():
        return
    status, before = _call(settings, state, "GET", f"/v1/hosts/{chd.id}")
    if status not in (200, 404):
        raise RefusedError(f"GET /v1/hosts/{chd.id}: {_problem(status, before)}")
    inventory = _inventory(before) if status == 200 else None
    if domains is not None and inventory is not None:
        domains = known_as(domains, holders(inventory))
    host = with_domains(chd, domains) if domains else chd
    found = drift(host, inventory, domains) if inventory is not None else []
    for item in found:
        _finding(settings, item)
    status, put = _call(
        settings,
        state,
        "PUT",
        f"/v1/hosts/{host.id}",
        host.model_dump(mode="json", by_alias=True, exclude_none=True),
    )
    if status not in (200, 201):
        raise RefusedError(f"PUT /v1/hosts/{host.id}: {_problem(status, put)}")
    for conflict in put.get("conflicts") or ():
        settings.log(
            f"conflict [{errors.CLAIM_CONFLICT}] placement {conflict.get('placement')} "
            f"({conflict.get('instance')}): {conflict.get('path')}: {conflict.get('message')}"
        )
    state.reports["ok"] += 1
    settings.log(
        f"reported {host.id} (generation {put.get('generation')}): {len(found)} drift finding(s), "
        f"{len(put.get('conflicts') or ())} conflict(s)"
    )
    try:
        _metrics(settings, state, found)
    except OSError as exc:
        settings.log(f"cannot write {settings.metrics_file}: {exc.strerror or exc}")


def _inventory(answer: Any) -> ComputeHostDescriptor:
    try:
        return ComputeHostDescriptor.model_validate(answer["chd"])
    except (TypeError, KeyError, ValidationError) as exc:
        raise RefusedError(f"the service's view of the host is not a CHD: {exc}") from None


def _problem(status: int, body: Any) -> str:
    if isinstance(body, dict) and body.get("code"):
        return f"HTTP {status} {body['code']}: {body.get('detail', '')}"
    return f"HTTP {status}"


def _metrics(settings: AgentSettings, state: AgentState, found: list[Drift] | None) -> None:
    """The drift and the reports as a Prometheus text file (node exporter's textfile collector)."""
    if settings.metrics_file is None:
        return
    from prometheus_client import CollectorRegistry, Counter, Gauge, write_to_textfile

    registry = CollectorRegistry()
    gauge = Gauge(
        "nfvplace_agent_drift",
        "Resources in use on the host but free in the inventory (host_only), held in the "
        "inventory with no running domain (inventory_only) or by another owner (owner_mismatch); "
        "hugepages in pages",
        ["resource", "side"],
        registry=registry,
    )
    for resource in ("pu", "vf", "port", "device", "hugepages"):
        for side in ("host_only", "inventory_only", "owner_mismatch"):
            gauge.labels(resource, side).set(0)
    for (resource, side), count in totals(found or []).items():
        gauge.labels(resource, side).set(count)
    reports = Counter(
        "nfvplace_agent_reports", "Reports to the service", ["result"], registry=registry
    )
    for result, count in state.reports.items():
        reports.labels(result).inc(count)
    Gauge(
        "nfvplace_agent_last_report_seconds",
        "When the last report succeeded (Unix time)",
        registry=registry,
    ).set(time.time())
    write_to_textfile(str(settings.metrics_file), registry)


def run(settings: AgentSettings) -> int:
    """Report until SIGTERM/SIGINT (exit 0); with `once`, one report (exit 0, or 1 if it failed)."""
    state = AgentState()
    say = settings.log
    settings = replace(settings, log=lambda line: say(redact(line, *state.secrets)))

    def stop(signum: int, _frame: Any) -> None:
        state.stop.set()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        return _loop(settings, state)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _loop(settings: AgentSettings, state: AgentState) -> int:
    backoff = FIRST_BACKOFF_S
    while not state.stop.is_set():
        try:
            cycle(settings, state)
            backoff = FIRST_BACKOFF_S
            wait = settings.interval
        except UnreachableError as exc:
            state.reports["unreachable"] += 1
            wait = min(backoff, settings.interval) * random.uniform(0.8, 1.2)
            _failed(settings, errors.AGENT_UNREACHABLE, f"{exc}", f"{wait:.1f} s")
            backoff *= 2
        except RefusedError as exc:
            state.reports["refused"] += 1
            wait = settings.interval
            _failed(settings, errors.AGENT_REFUSED, f"{exc}", f"{wait:.0f} s")
        except errors.NfvplaceError as exc:  # discovery failed or the token file is unusable
            wait = settings.interval
            _failed(settings, exc.code, f"{exc}; nothing sent", f"{wait:.0f} s")
        except OSError as exc:  # nothing was sent
            wait = settings.interval
            _failed(settings, errors.AGENT_REFUSED, f"{exc}; nothing sent", f"{wait:.0f} s")
        if settings.once:
            return 0 if state.reports["ok"] else 1
        state.stop.wait(wait)
    settings.log("stopped")
    return 0


def _failed(settings: AgentSettings, code: str, what: str, again: str) -> None:
    """One line for a failed report: what failed, then when it is tried again (or, with --once,
    that the agent exits 1 without trying again)."""
    then = "exiting 1 (--once: not tried again)" if settings.once else f"again in {again}"
    settings.log(f"error [{code}] {what}; {then}")
