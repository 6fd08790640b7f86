"""Fleet simulation: replay an arrival/departure trace of VMs over a fleet, per placement policy.

`make_trace` draws a seeded trace (Poisson arrivals, exponential lifetimes, VMs drawn from a mix of VM
Descriptors); `read_trace`/`write_trace` keep one as JSON lines. `simulate` replays it on a copy of
the fleet with the single-VM engine (nothing is changed on the hosts given) and samples the series:
acceptance ratio, stranded capacity and placement latency. `plot` draws a run (PNG or SVG).
"""

from __future__ import annotations

from .run import Run, Sample, simulate
from .trace import Event, make_trace, read_trace, write_trace

__all__ = ["Event", "Run", "Sample", "make_trace", "read_trace", "simulate", "write_trace"]
