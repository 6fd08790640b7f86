"""`nfvplace simulate`: replay an arrival/departure trace over a fleet, per policy, with plots.

Exit codes: 0 (a summary line per policy on stdout; series and plots in --out), 1 invalid input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import errors
from ..errors import DescriptorError, Issue, NfvplaceError
from .application import app
from .common import check_choice, fail

if TYPE_CHECKING:  # loaded when the command runs: `--help` stays quick
    from ..models.chd import ComputeHostDescriptor
    from ..models.vmd import VmDescriptor
    from ..simulation.run import Run

PLOT_FORMATS = ("png", "svg")


def _copies(hosts: list[ComputeHostDescriptor], copies: int) -> list[ComputeHostDescriptor]:
    if copies == 1:
        return hosts
    return [h.model_copy(update={"id": f"{h.id}-{k}"}) for k in range(1, copies + 1) for h in hosts]


def _descriptors(paths: list[Path]) -> list[VmDescriptor]:
    from ..models.vmd import VmDescriptor
    from .inputs import load_vm

    out = []
    for path in paths:
        loaded = load_vm(path)
        if not isinstance(loaded, VmDescriptor):
            raise DescriptorError(
                errors.INPUT_UNKNOWN_KIND,
                "simulate replays VM Descriptors, not VNF templates",
                file=str(path),
                issues=(Issue("give VM Descriptors", path="schema"),),
            )
        out.append(loaded)
    return out


def _auto_lifetime(
    hosts: list[ComputeHostDescriptor], vms: list[VmDescriptor], rate: float
) -> float:
    """A mean lifetime that keeps about 1.2 times what the fleet holds live (a loaded fleet)."""
    threads = sum(
        1 for h in hosts for n in h.numa_nodes for c in n.cpus if c.eligible and c.state == "free"
    )
    mean_vcpus = sum(max(v.total_vcpus, 1) for v in vms) / len(vms)
    return max(1.2 * threads / mean_vcpus / rate, 1.0)


HostsOption = Annotated[list[Path], typer.Option("--hosts", help="CHD files or folders")]
VmOption = Annotated[list[Path], typer.Option("--vm", help="VM Descriptors of the mix (repeat)")]
PolicyOption = Annotated[
    list[str] | None,
    typer.Option("--policy", help="pack | spread | least-fragmentation (repeat: one run each)"),
]
EventsOption = Annotated[int, typer.Option("--events", help="Events to generate", min=1)]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the trace and tie-breaks")]
RateOption = Annotated[float, typer.Option("--rate", help="Arrivals per second", min=1e-9)]
LifetimeOption = Annotated[
    float, typer.Option("--lifetime", help="Mean VM lifetime in seconds (0: load the fleet)")
]
CopiesOption = Annotated[
    int, typer.Option("--copies", help="Copies of the hosts (a larger fleet)", min=1)
]
TraceOption = Annotated[
    Path | None, typer.Option("--trace", help="Replay this trace (JSON lines) instead")
]
WriteTraceOption = Annotated[
    Path | None, typer.Option("--write-trace", help="Also write the trace as JSON lines")
]
OutOption = Annotated[Path, typer.Option("--out", help="Folder for series and plots")]
PlotFormatOption = Annotated[str, typer.Option("--plot-format", help="png | svg")]
SamplesOption = Annotated[int, typer.Option("--samples", help="Points per series", min=1)]
QuietOption = Annotated[bool, typer.Option("--quiet", help="No progress bar")]


@app.command("simulate")
def simulate_command(
    hosts: HostsOption,
    vm: VmOption,
    policy: PolicyOption = None,
    events: EventsOption = 10_000,
    seed: SeedOption = 0,
    rate: RateOption = 1.0,
    lifetime: LifetimeOption = 0.0,
    copies: CopiesOption = 1,
    trace: TraceOption = None,
    write_trace: WriteTraceOption = None,
    out: OutOption = Path("simulation"),
    plot_format: PlotFormatOption = "png",
    samples: SamplesOption = 100,
    quiet: QuietOption = False,
) -> None:
    """Replay a seeded (or given) arrival/departure trace over the fleet for each policy."""
    from ..simulation import make_trace, read_trace
    from ..simulation import write_trace as save_trace
    from ..simulation.plot import require_matplotlib
    from ..simulation.run import replay
    from .inputs import load_hosts
    from .progress import Progress

    policies = policy or ["pack"]
    check_choice(plot_format, PLOT_FORMATS, "--plot-format")
    try:
        require_matplotlib()  # before the replay, not after minutes of it
        fleet = _copies(load_hosts(hosts), copies)
        vms = _descriptors(vm)
        mean_life = lifetime or _auto_lifetime(fleet, vms, rate)
        names = [v.name for v in vms]
        trail = (
            read_trace(trace)
            if trace
            else make_trace(names, events, seed=seed, rate=rate, lifetime=mean_life)
        )
        if write_trace is not None:
            save_trace(trail, write_trace)
        out.mkdir(parents=True, exist_ok=True)
        named = {v.name: v for v in vms}
        for name in policies:
            with Progress(f"simulating {name}", total=len(trail), quiet=quiet) as bar:
                run = replay(
                    fleet, named, trail, name, samples=samples, seed=seed, on_event=bar.advance
                )
            _save(run, out, plot_format, f"{len(trail)} events on {len(fleet)} hosts")
    except NfvplaceError as error:
        raise fail(error) from None


def _save(run: Run, out: Path, plot_format: str, what: str) -> None:
    """One policy's run: its series (CSV, JSON) and plot in `out`, and its summary line."""
    from ..simulation.plot import plot, to_csv

    stem = out / run.policy
    (stem.with_suffix(".csv")).write_text(to_csv(run), encoding="utf-8")
    (stem.with_suffix(".json")).write_text(
        json.dumps(run.to_dict(), indent=2) + "\n", encoding="utf-8"
    )
    plot(run, stem.with_suffix(f".{plot_format}"))
    last = run.samples[-1]
    typer.echo(
        f"{run.policy}: {run.accepted}/{run.arrivals} placed ({run.acceptance:.1%}), "
        f"stranded at the end: {last.half_cores} half-used cores, "
        f"{last.hugepages_gib:g} GiB hugepages and {last.vfs} VFs next to no free core; "
        f"p95 latency {last.latency_p95_ms:g} ms; {what} "
        f"in {run.seconds:.1f} s -> {stem}.{{csv,json,{plot_format}}}"
    )
