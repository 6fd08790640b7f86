"""Arrival/departure traces: seeded generation, and JSON lines on disk.

An event is `{"t": seconds, "kind": "arrive" | "depart", "id": "vm-17", "vm": "<descriptor name>"}`.
A generated trace has `events` events in all: arrivals at rate `rate` (per second), each VM staying an
exponential time of mean `lifetime` seconds, drawn uniformly (or by `weights`) from the descriptors.
The fleet is in steady state when `rate * lifetime` VMs are live on average: make that more than it
holds to study a loaded fleet.
"""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import errors
from ..errors import DescriptorError, Issue

KINDS = ("arrive", "depart")


@dataclass(frozen=True, slots=True)
class Event:
    t: float
    kind: str  # arrive | depart
    id: str  # VM instance id
    vm: str  # name of the VM Descriptor

    def to_dict(self) -> dict[str, object]:
        return {"t": round(self.t, 6), "kind": self.kind, "id": self.id, "vm": self.vm}


def make_trace(
    names: Sequence[str],
    events: int,
    *,
    seed: int = 0,
    rate: float = 1.0,
    lifetime: float = 100.0,
    weights: Sequence[float] | None = None,
) -> list[Event]:
    """`events` events (arrivals and the departures of those that arrived), in time order."""
    if not names:
        raise ValueError("give at least one VM Descriptor name")
    rng = random.Random(seed)
    out: list[Event] = []
    leaving: list[tuple[float, int, str, str]] = []
    t = 0.0
    k = 0
    while len(out) < events:
        t += rng.expovariate(rate)
        while leaving and leaving[0][0] <= t and len(out) < events:
            when, _, ident, name = heapq.heappop(leaving)
            out.append(Event(when, "depart", ident, name))
        if len(out) >= events:
            break
        k += 1
        name = rng.choices(list(names), weights=weights)[0]
        ident = f"vm-{k}"
        out.append(Event(t, "arrive", ident, name))
        heapq.heappush(leaving, (t + rng.expovariate(1 / lifetime), k, ident, name))
    return out


def write_trace(events: Sequence[Event], path: Path) -> None:
    path.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in events), encoding="utf-8")


def read_trace(path: Path) -> list[Event]:
    """Events from JSON lines; a bad line is an error naming the file, the line and the field."""
    out: list[Event] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            event = Event(float(data["t"]), str(data["kind"]), str(data["id"]), str(data["vm"]))
            if event.kind not in KINDS:
                raise ValueError(f"kind {event.kind!r} is not arrive or depart")
        except (ValueError, KeyError, TypeError) as exc:
            raise DescriptorError(
                errors.INPUT_INVALID,
                f"trace line {number}: {exc}",
                file=str(path),
                issues=(
                    Issue(
                        f"line {number}: {exc}",
                        path=f"line {number}",
                        hint='each line: {"t": 1.5, "kind": "arrive", "id": "vm-1", "vm": "name"}',
                    ),
                ),
            ) from None
        out.append(event)
    return out
