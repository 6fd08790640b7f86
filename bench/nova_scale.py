"""NfvplaceFilter over 1,000 candidate hosts against Nova's NUMATopologyFilter, same run.

    .venv/bin/python bench/nova_scale.py [--hosts 1000] [--seed 1]

Starts a real `nfvplace serve`, runs bench/nova_candidates.py in the Nova virtualenv (built by
`bash bench/nova_venv.sh` on first use) and prints, per flavor, the milliseconds of Nova's
NUMATopologyFilter over every host and of NfvplaceFilter's pass cold (a new plug-in, and a service
of the flavor's own holding no host and no answer), warm (the next boot: one host changed) and warm
with another flavor (hosts held, answers not), with their ratios to Nova's; then the same cold
and warm passes in CPU time (the plug-in's and the service's processes against Nova's filter's),
which the load of a shared machine moves far less than the wall clock.
Issue 38's targets: warm p50 <= 0.5 x and cold <= 1 x NUMATopologyFilter.

`--compare TREE` runs every flavor also with another checkout's plug-in and service (its
`bench/nova_candidates.py`, and `nfvplace serve` with that tree first on PYTHONPATH), each flavor's
two runs back to back (which goes first alternates), and prints both trees' tables.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import nova_loop  # noqa: E402
from bench.nova_candidates import FLAVORS  # noqa: E402


def _session_of(url: str) -> int | None:
    """The session of the `nfvplace serve` listening at `url` (its own: it starts a new one, and
    is its leader), found in Linux's /proc; None elsewhere."""
    port = url.rsplit(":", 1)[1].encode()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and port in argv:
            return int(entry.name)
    return None


@contextlib.contextmanager
def _python_path(tree: Path) -> Iterator[None]:
    """`tree` first on PYTHONPATH for the processes started meanwhile (the service)."""
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(tree)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


def _flavor(n: int, hosts: int, seed: int, tree: Path) -> dict[str, Any]:
    """Flavor n against a service of its own (cold: it holds no host and no answer)."""
    with _python_path(tree), nova_loop.service() as (url, token_file):
        asked = {"url": url, "token_file": token_file, "hosts": hosts, "seed": seed}
        asked["service_session"] = _session_of(url)
        done = subprocess.run(
            [nova_loop.nova_python(), str(tree / "bench" / "nova_candidates.py")],
            input=json.dumps(asked | {"flavors": [n]}),
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(tree)},
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-4000:])
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run(hosts: int, seed: int, trees: Sequence[Path] = (ROOT,)) -> list[dict[str, Any]]:
    """Every flavor with each tree (their runs of a flavor back to back, the first alternating)."""
    out: list[dict[str, Any]] = [{} for _ in trees]
    for n in range(len(FLAVORS)):
        order = list(range(len(trees)))
        for k in order[n % 2 :] + order[: n % 2]:
            result = _flavor(n, hosts, seed, trees[k])
            flavors = [*out[k].get("flavors", ()), *result["flavors"]]
            warnings = [*out[k].get("warnings", ()), *result["warnings"]]
            out[k] = result | {"flavors": flavors, "warnings": warnings}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--compare", type=Path, help="another checkout, run in the same run")
    args = parser.parse_args()
    trees = [ROOT] if args.compare is None else [ROOT, args.compare.resolve()]
    for tree, result in zip(trees, run(args.hosts, args.seed, trees), strict=True):
        print(f"== {tree}")
        _report(result)


def _report(result: dict[str, Any]) -> None:
    print(
        f"{result['hosts']} hosts, CHDs as sent median {result['chd_bytes']['median']:,.0f} B, "
        f"max {result['chd_bytes']['max']:,} B"
    )
    print(
        f"{'flavor':<10} {'Nova ms':>8} {'cold ms':>8} {'x':>5} {'warm ms':>8} {'x':>5} "
        f"{'other ms':>8} {'x':>5}  passing (Nova / nfvplace)"
    )
    for f in result["flavors"]:
        nova = f["nova_ms"]
        print(
            f"{f['flavor']:<10} {nova:8.0f} {f['cold_ms']:8.0f} {f['cold_ms'] / nova:5.2f} "
            f"{f['warm_ms']:8.0f} {f['warm_ms'] / nova:5.2f} {f['warm_other_ms']:8.0f} "
            f"{f['warm_other_ms'] / nova:5.2f}  {f['nova_pass']} / {f['cold_pass']}"
        )
    warm = statistics.median(f["warm_ms"] / f["nova_ms"] for f in result["flavors"])
    cold = statistics.median(f["cold_ms"] / f["nova_ms"] for f in result["flavors"])
    print(f"median ratio to NUMATopologyFilter: cold {cold:.2f} x, warm {warm:.2f} x")
    print(
        f"{'CPU ms':<10} {'Nova':>8} {'cold':>8} {'x':>5} {'warm':>8} {'x':>5}  (plug-in and service)"
    )
    for f in result["flavors"]:
        nova = f["nova_cpu_ms"]
        print(
            f"{f['flavor']:<10} {nova:8.0f} {f['cold_cpu_ms']:8.0f} {f['cold_cpu_ms'] / nova:5.2f} "
            f"{f['warm_cpu_ms']:8.0f} {f['warm_cpu_ms'] / nova:5.2f}"
        )
    warm = statistics.median(f["warm_cpu_ms"] / f["nova_cpu_ms"] for f in result["flavors"])
    cold = statistics.median(f["cold_cpu_ms"] / f["nova_cpu_ms"] for f in result["flavors"])
    print(f"median CPU ratio to NUMATopologyFilter: cold {cold:.2f} x, warm {warm:.2f} x")
    if result["warnings"]:
        print("warnings:", *result["warnings"], sep="\n  ")


if __name__ == "__main__":
    main()
