"""NfvplaceFilter over 1,000 candidate hosts against Nova's NUMATopologyFilter, same run.

    .venv/bin/python bench/nova_scale.py [--hosts 1000] [--seed 1]

Starts a real `nfvplace serve`, runs bench/nova_candidates.py in the Nova virtualenv (built by
`bash bench/nova_venv.sh` on first use) and prints, per flavor, the milliseconds of Nova's
NUMATopologyFilter over every host and of NfvplaceFilter's pass cold (a new plug-in, and a service
of the flavor's own holding no host and no answer), warm (the next boot: one host changed) and warm
with another flavor (hosts held, answers not), with their ratios to Nova's.
Issue 38's targets: warm p50 <= 0.5 x and cold <= 1 x NUMATopologyFilter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import nova_loop  # noqa: E402
from bench.nova_candidates import FLAVORS  # noqa: E402


def run(hosts: int, seed: int) -> dict[str, Any]:
    """Every flavor against a service of its own (cold: it holds no host and no answer)."""
    python = nova_loop.nova_python()
    out: dict[str, Any] = {}
    for n in range(len(FLAVORS)):
        with nova_loop.service() as (url, token_file):
            asked = {"url": url, "token_file": token_file, "hosts": hosts, "seed": seed}
            done = subprocess.run(
                [python, str(ROOT / "bench" / "nova_candidates.py")],
                input=json.dumps(asked | {"flavors": [n]}),
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                check=False,
            )
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-4000:])
        result = json.loads(done.stdout)
        out = result | {"flavors": [*out.get("flavors", ()), *result["flavors"]]}
        out["warnings"] = [*out.get("warnings", ()), *result["warnings"]]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    result = run(args.hosts, args.seed)
    print(
        f"{result['hosts']} hosts, CHDs median {result['chd_bytes']['median']:,.0f} B, "
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
    if result["warnings"]:
        print("warnings:", *result["warnings"], sep="\n  ")


if __name__ == "__main__":
    main()
