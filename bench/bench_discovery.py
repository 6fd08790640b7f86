"""Time discovery of the 384-PU, 24-node machine (192em64t-24n8c2t.xml); target under 1 s.

    .venv/bin/python bench/bench_discovery.py [--runs 30] [--file PATH] [--live]

Prints p50/p99 of `chd_from_hwloc_xml` (read, safe parse, build and validate the CHD) and, measured
in the same run on the same file, two baselines:
- `lxml parse`: a bare `lxml.etree.fromstring` of the bytes (the floor for any XML reader);
- `pyhwloc load`: hwloc's own loader (`Topology.from_xml_file(...).load()`, distances off), timed
  inside one child process so its crash guard does not count.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lxml import etree

from nfvplace.discovery import chd_from_hwloc_xml

TARGET_S = 1.0
PYHWLOC_TIMER = """
import json, sys, time
from pyhwloc.topology import Topology, TopologyFlags, TypeFilter
path, runs = sys.argv[1], int(sys.argv[2])
times = []
for _ in range(runs):
    start = time.perf_counter()
    t = Topology.from_xml_file(path)
    t.set_flags(TopologyFlags.INCLUDE_DISALLOWED | TopologyFlags.NO_DISTANCES)
    t.set_io_types_filter(TypeFilter.KEEP_IMPORTANT)
    t.load()
    n = t.n_cpus()
    times.append(time.perf_counter() - start)
    t.destroy()
print(json.dumps(times))
"""


def default_file() -> Path:
    return Path(__file__).resolve().parents[1] / "tests/data/hwloc-xml/192em64t-24n8c2t.xml"


def timed(function: Callable[[], object], runs: int) -> list[float]:
    function()  # warm-up (imports, caches)
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        out.append(time.perf_counter() - start)
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def pyhwloc_times(path: Path, runs: int) -> list[float] | None:
    done = subprocess.run(
        [sys.executable, "-c", PYHWLOC_TIMER, str(path), str(runs + 1)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        return None
    times: list[float] = json.loads(done.stdout)[1:]
    return times


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="benchmark hwloc XML discovery")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--file", type=Path, default=default_file())
    parser.add_argument("--live", action="store_true", help="also time live discovery (info only)")
    args = parser.parse_args(argv)
    if not args.file.is_file():
        print(f"topology file not found: {args.file}", file=sys.stderr)
        return 1
    data = args.file.read_bytes()
    chd = chd_from_hwloc_xml(args.file)
    print(
        f"file: {args.file.name} ({len(data)} bytes): {len(chd.cpus)} PUs, "
        f"{len(chd.numa_nodes)} NUMA nodes; {args.runs} runs"
    )
    ours = timed(lambda: chd_from_hwloc_xml(args.file), args.runs)
    lxml_only = timed(lambda: etree.fromstring(data), args.runs)
    hwloc = pyhwloc_times(args.file, args.runs)
    p50, p99 = percentile(ours, 50), percentile(ours, 99)
    rows = [("nfvplace chd_from_hwloc_xml", ours), ("baseline: lxml parse only", lxml_only)]
    if hwloc:
        rows.append(("baseline: pyhwloc load (child)", hwloc))
    print(f"{'what':34} {'p50 ms':>9} {'p99 ms':>9} {'ours/this':>10}")
    for name, values in rows:
        ratio = p50 / percentile(values, 50)
        print(
            f"{name:34} {percentile(values, 50) * 1000:9.2f} {percentile(values, 99) * 1000:9.2f} "
            f"{ratio if values is not ours else 1.0:9.1f}x"
        )
    if hwloc is None:
        print("pyhwloc baseline unavailable (the child failed)")
    if args.live:
        from nfvplace.discovery import discover_live

        live = timed(discover_live, max(3, args.runs // 6))
        print(
            f"{'info: discover_live() on this host':34} {percentile(live, 50) * 1000:9.2f} "
            f"{percentile(live, 99) * 1000:9.2f}   (hwloc child process + sysfs + probes)"
        )
    verdict = "OK" if p99 < TARGET_S else "TOO SLOW"
    print(
        f"target: p99 < {TARGET_S:.1f} s -> {verdict} (p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms)"
    )
    return 0 if p99 < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
