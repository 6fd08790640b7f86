"""A run's series as a picture (PNG or SVG, matplotlib's Agg backend) and as CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, fields
from pathlib import Path

from .. import errors
from ..errors import NfvplaceError
from .run import Run, Sample


def to_csv(run: Run) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[f.name for f in fields(Sample)], lineterminator="\n")
    writer.writeheader()
    for sample in run.samples:
        writer.writerow(asdict(sample))
    return out.getvalue()


def require_matplotlib() -> None:
    """NfvplaceError naming the extra to install when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise NfvplaceError(
            errors.USAGE_MISSING_EXTRA,
            "the plots need matplotlib, which is not installed: pip install 'nfvplace[plot]'",
        ) from None


def plot(run: Run, path: Path) -> None:
    """Acceptance, stranded capacity and latency over the events, in one figure (`path`'s suffix
    says the format: .png or .svg)."""
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    x = [s.event for s in run.samples]
    figure, (top, middle, bottom) = pyplot.subplots(3, 1, figsize=(8, 9), sharex=True)
    top.plot(x, [s.acceptance for s in run.samples], label="acceptance (cumulative)")
    top.plot(x, [s.window_acceptance for s in run.samples], label="acceptance (window)", alpha=0.6)
    top.plot(x, [s.used_threads for s in run.samples], label="threads in use", linestyle="--")
    top.set_ylim(0, 1.05)
    top.set_ylabel("share")
    top.legend(loc="lower left", fontsize="small")
    top.set_title(
        f"policy {run.policy}: {run.accepted}/{run.arrivals} placed ({run.acceptance:.1%})"
    )
    middle.plot(x, [s.half_cores for s in run.samples], label="half-used cores")
    middle.plot(x, [s.vfs for s in run.samples], label="VFs next to no free core")
    twin = middle.twinx()
    twin.plot(x, [s.hugepages_gib for s in run.samples], color="tab:red", label="hugepages (GiB)")
    twin.set_ylabel("GiB stranded")
    middle.set_ylabel("stranded")
    lines = middle.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    middle.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left", fontsize="small")
    bottom.plot(x, [s.latency_p50_ms for s in run.samples], label="p50")
    bottom.plot(x, [s.latency_p95_ms for s in run.samples], label="p95")
    bottom.set_ylabel("placement latency (ms)")
    bottom.set_xlabel("events replayed")
    bottom.legend(loc="upper left", fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)
