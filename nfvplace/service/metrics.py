"""Prometheus metrics of one app (per-app registry; multiprocess when PROMETHEUS_MULTIPROC_DIR)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client import multiprocess as prometheus_multiprocess

PHASES = ("refresh", "read", "engine", "index", "commit")


@dataclass
class Metrics:
    registry: CollectorRegistry = field(
        default_factory=lambda: CollectorRegistry(auto_describe=True)
    )

    def __post_init__(self) -> None:
        self.latency = Histogram(
            "nfvplace_http_request_duration_seconds",
            "HTTP request latency",
            ["method", "route", "status"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )
        self.placements = Counter(
            "nfvplace_placements",
            "Placement requests by outcome (placed, dry_run, replayed, no_fit, conflict, invalid)",
            ["outcome"],
            registry=self.registry,
        )
        self.no_fit_reasons = Counter(
            "nfvplace_no_fit_reasons",
            "Rejection reasons of placements that found no host",
            ["reason"],
            registry=self.registry,
        )
        self.conflicts = Counter(
            "nfvplace_placement_conflicts",
            "Compare-and-swap conflicts (stale snapshots) that made a placement recompute",
            registry=self.registry,
        )
        self.releases = Counter("nfvplace_releases", "Placements released", registry=self.registry)
        self.hosts_read = Counter(
            "nfvplace_hosts_read",
            "Hosts read from the database into a worker's index (at start, and each host another "
            "worker or an agent changed, when the worker needs it)",
            registry=self.registry,
        )
        cpu = Counter(
            "nfvplace_placement_cpu_seconds",
            "CPU seconds of placing, by phase: refresh (the change feed), read (hosts read again "
            "from the database), "
            "engine (deciding), index (the claimed hosts applied to the worker's index), commit "
            "(the store's transaction); the rest of a worker's CPU is HTTP and the event loop",
            ["phase"],
            registry=self.registry,
        )
        self._cpu = {phase: cpu.labels(phase) for phase in PHASES}
        # the label sets seen, each child looked up once (`labels` took as long as the increment)
        self._outcomes: dict[str, Any] = {}
        self._latencies: dict[tuple[str, str, str], Any] = {}

    def charge(self, phase: str, seconds: float) -> None:
        """Add CPU seconds to a phase of placing (see `PhaseClock`)."""
        self._cpu[phase].inc(seconds)

    def placed(self, outcome: str) -> None:
        """Count a placement request by its outcome (`nfvplace_placements`)."""
        child = self._outcomes.get(outcome)
        if child is None:
            child = self._outcomes[outcome] = self.placements.labels(outcome)
        child.inc()

    def answered(self, method: str, route: str, status: str, seconds: float) -> None:
        """A request's latency (`nfvplace_http_request_duration_seconds`)."""
        key = (method, route, status)
        child = self._latencies.get(key)
        if child is None:
            child = self._latencies[key] = self.latency.labels(*key)
        child.observe(seconds)

    def exposition(self) -> bytes:
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            registry = CollectorRegistry()
            prometheus_multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return bytes(generate_latest(registry))
        return bytes(generate_latest(self.registry))


class PhaseClock:
    """CPU time of this thread spent in each phase of a placement: `spent(phase)` adds the time
    since the last mark to `phase`, and `charge_spent()` hands what was added since, a phase at a
    time, to `charge` (`Metrics.charge`). The placement charges where no phase runs (at the end
    of its decision and of its commit), so the charges themselves (a counter in a shared file
    under several workers) are in no phase, and a mark reads the clock once: `thread_time` is a
    system call, twelve a placement when each mark charged at once and read the clock again."""

    def __init__(self, charge: Callable[[str, float], None] | None = None) -> None:
        self.charge = charge
        self._marks = threading.local()

    def start(self) -> None:
        self._marks.at = time.thread_time()

    def spent(self, phase: str) -> None:
        marks = self._marks
        now = time.thread_time()
        owed: dict[str, float] | None = getattr(marks, "owed", None)
        if owed is None:
            owed = marks.owed = {}
        owed[phase] = owed.get(phase, 0.0) + (now - marks.at)
        marks.at = now

    def charge_spent(self) -> None:
        """Charge the phases spent since the last call (in the order first spent)."""
        owed: dict[str, float] | None = getattr(self._marks, "owed", None)
        if not owed:
            return
        self._marks.owed = {}
        if self.charge is not None:
            for phase, seconds in owed.items():
                self.charge(phase, seconds)
