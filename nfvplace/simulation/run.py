"""Replaying a trace over a fleet with one placement policy, and the series it yields.

Every arrival is placed with the single-VM engine on the fleet as the events before left it (a working
index; the hosts given are never changed), every departure releases what its VM held. Every
`len(events) / samples` events a sample records:

- `acceptance`: VMs placed / VMs that arrived, since the start; `window_acceptance`: the same over the
  events since the previous sample;
- stranded capacity, what the fleet holds but can hardly sell: `half_cores` (free threads whose
  sibling another VM uses: no howtogroup pair or isolated vCPU can take them), `hugepages_gib` (free
  hugepages on NUMA nodes with no free thread left) and `vfs` (free VFs on such nodes);
- placement latency of the window (`latency_p50_ms`, `latency_p95_ms`, engine calls only);
- a host the exact model refused a VM on is skipped for that VM until a departure frees something on
  it (arrivals only take resources away, so it cannot have become able to take it): the same
  answers, fewer solves.
- `live` VMs and `used_threads` (share of eligible threads in use).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from .. import errors
from ..claims import release
from ..errors import DescriptorError, Issue
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from ..placement.engine.candidates import fitting_hosts
from ..placement.index import FleetIndex, index_of
from ..placement.options import Options, parse_options
from ..placement.resources.base import BoolArray
from ..placement.resources.cpu import CPU
from ..placement.resources.memory import MEMORY
from ..placement.resources.nics import NICS
from .trace import Event

GIB_KIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Sample:
    event: int  # events replayed so far
    t: float  # trace time
    arrivals: int
    accepted: int
    acceptance: float
    window_acceptance: float
    live: int
    used_threads: float
    half_cores: int
    hugepages_gib: float
    vfs: int
    latency_p50_ms: float
    latency_p95_ms: float


@dataclass
class Run:
    policy: str
    samples: list[Sample] = field(default_factory=list)
    arrivals: int = 0
    accepted: int = 0
    seconds: float = 0.0  # wall time of the replay

    @property
    def acceptance(self) -> float:
        return self.accepted / self.arrivals if self.arrivals else 1.0

    def summary(self) -> dict[str, object]:
        last = self.samples[-1] if self.samples else None
        return {
            "policy": self.policy,
            "arrivals": self.arrivals,
            "accepted": self.accepted,
            "acceptance": round(self.acceptance, 4),
            "seconds": round(self.seconds, 2),
            "final": asdict(last) if last else None,
        }

    def to_dict(self) -> dict[str, object]:
        return {"summary": self.summary(), "series": [asdict(s) for s in self.samples]}


def stranded(fleet: FleetIndex) -> tuple[int, float, int, float]:
    """Half-used cores, GiB of hugepages and VFs on nodes with no free thread, share of used threads."""
    cpu, memory = fleet.table(CPU), fleet.table(MEMORY)
    free = cpu.whole + cpu.single + cpu.half_busy
    dead = (free == 0) & (fleet.node_id >= 0)
    sizes = np.asarray(fleet.vocab.values("page_sizes") or [0], dtype=np.float64)
    pages = (memory.hugepages * sizes[: memory.hugepages.shape[2]]).sum(axis=2) / GIB_KIB
    used = 1.0 - float(cpu.free_threads.sum()) / max(float(cpu.total_threads.sum()), 1.0)
    return (
        int(cpu.half_busy.sum()),
        float(pages[dead].sum()),
        int(fleet.table(NICS).vfs[:, :, 0][dead].sum()),
        used,
    )


def _check(events: Sequence[Event], descriptors: Mapping[str, VmDescriptor]) -> None:
    missing = sorted({e.vm for e in events} - set(descriptors))
    if missing:
        raise DescriptorError(
            errors.INPUT_REFERENCE,
            f"the trace names VM Descriptors not given: {', '.join(missing)}",
            issues=(
                Issue(
                    f"no descriptor named {missing[0]}",
                    path="vm",
                    hint=f"give --vm files named {', '.join(missing)}",
                ),
            ),
        )


def _arrive(
    fleet: FleetIndex,
    vm: VmDescriptor,
    options: Options,
    instance: str,
    blocked: dict[str, set[int]],
    latencies: list[float],
) -> VmConfiguration | None:
    refused = blocked.setdefault(vm.name, set())
    consider: BoolArray = np.ones(len(fleet), dtype=np.bool_)
    consider[list(refused)] = False
    tried: list[int] = []

    def attempt(i: int) -> bool:
        tried.append(i)
        return False

    began = time.perf_counter()
    fit = next(fitting_hosts(fleet, vm, options, consider, instance, skip=attempt), None)
    latencies.append((time.perf_counter() - began) * 1000)
    if fit is None:
        refused.update(tried)
        return None
    refused.update(tried[:-1])
    fleet.update(fit.host)
    return fit.configuration


def replay(
    hosts: Sequence[ComputeHostDescriptor],
    descriptors: Mapping[str, VmDescriptor],
    events: Sequence[Event],
    policy: str,
    *,
    samples: int = 100,
    seed: int = 0,
    on_event: Callable[[], None] | None = None,
) -> Run:
    _check(events, descriptors)
    options = parse_options(policy=policy, seed=seed)
    fleet = index_of(hosts, private=True)
    live: dict[str, VmConfiguration] = {}
    run = Run(str(options.policy))
    every = max(len(events) // max(samples, 1), 1)
    latencies: list[float] = []
    window = (0, 0)  # arrivals, accepted at the previous sample
    # Hosts the engine refused a VM on stay refused until a departure frees something on them
    # (arrivals only take resources away): the next arrival of that VM skips them. Same answers,
    # far fewer exact solves on a loaded fleet.
    blocked: dict[str, set[int]] = {}
    start = time.perf_counter()
    for n, event in enumerate(events, start=1):
        if event.kind == "arrive":
            run.arrivals += 1
            config = _arrive(fleet, descriptors[event.vm], options, event.id, blocked, latencies)
            if config is not None:
                live[event.id] = config
                run.accepted += 1
        else:
            config = live.pop(event.id, None)
            if config is not None:
                fleet.update(release(fleet.host(config.host), config))
                host = fleet.positions[config.host]
                for hosts_of in blocked.values():
                    hosts_of.discard(host)
        if n % every == 0 or n == len(events):
            run.samples.append(_sample(run, fleet, n, event.t, len(live), window, latencies))
            window = (run.arrivals, run.accepted)
            latencies = []
        if on_event is not None:
            on_event()
    run.seconds = time.perf_counter() - start
    return run


def _sample(
    run: Run,
    fleet: FleetIndex,
    n: int,
    t: float,
    live: int,
    window: tuple[int, int],
    latencies: list[float],
) -> Sample:
    """The fleet after the n-th event: acceptance overall and since the previous sample (`window`:
    arrivals and accepted then), what is stranded, and the latencies since the previous sample."""
    half, pages, vfs, used = stranded(fleet)
    arrived, accepted = run.arrivals - window[0], run.accepted - window[1]
    lat = np.asarray(latencies or [0.0])
    return Sample(
        event=n,
        t=round(t, 3),
        arrivals=run.arrivals,
        accepted=run.accepted,
        acceptance=round(run.acceptance, 4),
        window_acceptance=round(accepted / arrived, 4) if arrived else 1.0,
        live=live,
        used_threads=round(used, 4),
        half_cores=half,
        hugepages_gib=round(pages, 1),
        vfs=vfs,
        latency_p50_ms=round(float(np.percentile(lat, 50)), 3),
        latency_p95_ms=round(float(np.percentile(lat, 95)), 3),
    )


def simulate(
    hosts: Sequence[ComputeHostDescriptor],
    descriptors: Sequence[VmDescriptor],
    events: Sequence[Event],
    policies: Sequence[str] = ("pack",),
    *,
    samples: int = 100,
    seed: int = 0,
    on_event: Callable[[], None] | None = None,
) -> list[Run]:
    """One run per policy, each replaying `events` from the hosts as given."""
    named = {d.name: d for d in descriptors}
    return [
        replay(
            hosts,
            named,
            events,
            p,
            samples=samples,
            seed=seed,
            on_event=on_event,
        )
        for p in policies
    ]
