"""Prometheus metrics of one app (per-app registry; multiprocess when PROMETHEUS_MULTIPROC_DIR)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

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

    def charge(self, phase: str, seconds: float) -> None:
        """Add CPU seconds to a phase of placing (see `PhaseClock`)."""
        self._cpu[phase].inc(seconds)

    def exposition(self) -> bytes:
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            registry = CollectorRegistry()
            prometheus_multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return bytes(generate_latest(registry))
        return bytes(generate_latest(self.registry))


class PhaseClock:
    """CPU time of this thread spent in each phase of a placement (`spent(phase)` charges the
    time since the last mark to `phase`), handed to `charge` (`Metrics.charge`). The charge itself
    (a counter in a shared file under several workers) is in no phase: marked after it, it was
    the next phase's, the engine's after the refresh."""

    def __init__(self, charge: Callable[[str, float], None] | None = None) -> None:
        self.charge = charge
        self._marks = threading.local()

    def start(self) -> None:
        self._marks.at = time.thread_time()

    def spent(self, phase: str) -> None:
        now = time.thread_time()
        if self.charge is not None:
            self.charge(phase, now - self._marks.at)
            now = time.thread_time()
        self._marks.at = now
