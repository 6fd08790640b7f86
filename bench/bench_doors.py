"""Every door users reach, against the engine behind it and Nova's fitter, in one run.

    .venv/bin/python -m bench.bench_doors                  # 1,000 JSON host files
    .venv/bin/python -m bench.bench_doors --hosts 10000    # and 10,000

A seeded fleet (`bench/hostgen.py`) is written as JSON files to a temporary folder, then timed:
plain `json.load` of the files (the baseline for loading), `nfvplace.load` of the folder,
`nfvplace place --hosts DIR` end to end (a subprocess), `nfvplace.place(list, vm)` repeated on the
same objects, `nfvplace.Fleet(...).place`, the engine on a prebuilt `FleetIndex`, and Nova's NUMA
fitter over the same hosts (`bench/nova_fit.py`, in the interpreter `bench/nova_venv.sh` builds and
`NFVPLACE_NOVA_PYTHON` names). Start-up of `nfvplace --help` and `nfvplace lint FILE` is compared
with `python -c pass`. Each door is printed as a ratio to the engine measured in the same run; the
load average is printed with the figures, since other work on the same cores skews them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import nfvplace
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex

from .bench_placement import NOVA_PER_HOST_MS, _nova_payload, nova_python
from .hostgen import iter_fleet, request_stream

ROOT = Path(__file__).resolve().parents[1]


def line(label: str, value: str, note: str = "") -> None:
    print(f"  {label:<52} {value:>12}  {note}")


def p50_ms(times: Sequence[float]) -> float:
    return statistics.median(times) * 1000


def timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def write_fleet(folder: Path, n: int, seed: int) -> None:
    for host in iter_fleet(n, seed=seed):
        (folder / f"{host.id}.json").write_text(nfvplace.dump(host, "json"))


def best_of(
    runs: int, command: Sequence[str], env: dict[str, str] | None = None
) -> tuple[float, float]:
    """(wall, CPU) seconds of the fastest of `runs` runs of a command (it must exit 0 or 3).

    CPU time (user + system, of the child) is printed next to wall time: on a loaded machine it is
    the steadier figure.
    """
    best = (float("inf"), float("inf"))
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, env=env, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode not in (0, 3):
            raise SystemExit(f"{' '.join(command)} failed: {proc.stderr.decode()[-2000:]}")
        best = min(best, (wall, cpu))
    return best


def secs(figure: tuple[float, float]) -> str:
    return f"{figure[0]:.2f} / {figure[1]:.2f} s"


def loading_section(folder: Path, n: int) -> list[Any]:
    print(f"\nLoading {n} JSON host files")
    files = sorted(folder.glob("*.json"))
    baseline = timed(lambda: [json.loads(f.read_bytes()) for f in files])
    hosts: list[Any] = []
    took = timed(lambda: hosts.extend(nfvplace.load(folder)))  # type: ignore[arg-type]
    line("plain json.load of the files (baseline)", f"{baseline:.3f} s")
    line(
        "nfvplace.load(folder)", f"{took:.3f} s", f"{took / baseline:.1f}x json.load (≤ 10x, ≤ 1 s)"
    )
    return hosts


def cli_section(folder: Path, n: int, vm_file: Path) -> None:
    print(f"\nCommand line over {n} host files (wall / CPU)")
    env = {**os.environ, "NFVPLACE_NO_PROGRESS": "1"}
    python = sys.executable
    nfvplace_cmd = [python, "-m", "nfvplace"]
    bare = best_of(3, [python, "-c", "pass"])
    place = best_of(1, [*nfvplace_cmd, "place", "--hosts", str(folder), "--vm", str(vm_file)], env)
    line(
        "nfvplace place --hosts DIR --vm FILE (end to end)",
        secs(place),
        "≤ 3 s (1,000), ≤ 20 s (10,000)",
    )
    # Start-up with compiled bytecode, as an installed package runs: without it (a
    # PYTHONDONTWRITEBYTECODE=1 shell) every run would also time compiling each module. The first run
    # of each command writes the bytecode; the best of the next five is kept.
    cached = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    helps = best_of(6, [*nfvplace_cmd, "--help"], cached)
    lint = best_of(6, [*nfvplace_cmd, "lint", str(vm_file)], cached)
    line("python -c pass (baseline)", secs(bare))
    line("nfvplace --help", secs(helps), "≤ 0.25 s")
    line("nfvplace lint FILE", secs(lint), "≤ 0.25 s")


def library_section(hosts: list[Any], vms: list[VmDescriptor]) -> float:
    """Each library door over the same requests; returns the engine's p50 in ms."""
    n = len(hosts)
    print(f"\nLibrary doors over {n} hosts, {len(vms)} requests (p50; ratio to the engine)")
    index = FleetIndex(hosts)
    engine = [timed(lambda vm=vm: nfvplace.place(index, vm)) for vm in vms]
    first = timed(lambda: nfvplace.place(hosts, vms[0]))
    listed = [timed(lambda vm=vm: nfvplace.place(hosts, vm)) for vm in vms]
    claimed_index = index.copy()

    def engine_and_claim(vm: VmDescriptor) -> None:
        result = nfvplace.place(claimed_index, vm)
        claimed_index.update_many(result.hosts.values())

    engine_claims = [timed(lambda vm=vm: engine_and_claim(vm)) for vm in vms]
    fleet = nfvplace.Fleet(hosts)
    by_fleet = [timed(lambda vm=vm: fleet.place(vm)) for vm in vms]
    base = p50_ms(engine)
    line("engine: place(FleetIndex, vm) (baseline)", f"{base:.2f} ms")
    line("nfvplace.place(list, vm), first call (builds)", f"{first * 1000:.0f} ms")
    line(
        "nfvplace.place(list, vm), repeated on the same list",
        f"{p50_ms(listed):.2f} ms",
        f"{p50_ms(listed) / base:.2f}x engine; p99 {sorted(listed)[-1] * 1000:.1f} ms (≤ 5 ms)",
    )
    line("engine, placing and claiming (update_many)", f"{p50_ms(engine_claims):.2f} ms")
    line(
        "nfvplace.Fleet(hosts).place(vm) (places and claims)",
        f"{p50_ms(by_fleet):.2f} ms",
        f"{p50_ms(by_fleet) / p50_ms(engine_claims):.2f}x engine placing and claiming",
    )
    return base


def nova_section(hosts: list[Any], vms: list[VmDescriptor], engine_ms: float) -> None:
    print(f"\nNova's fitter (numa_fit_instance_to_host) over the same {len(hosts)} hosts")
    python = nova_python()
    pinned = [vm for vm in vms if vm.cpu_sets]
    if python is None:
        print(
            "  !!! Nova is not installed: run `bash bench/nova_venv.sh` and set NFVPLACE_NOVA_PYTHON."
        )
        print(
            f"  !!! FALLING BACK to the written-down {NOVA_PER_HOST_MS} ms per host: a citation, not a measurement."
        )
        per_request = NOVA_PER_HOST_MS * len(hosts)
    else:
        payload = _nova_payload(hosts, pinned)
        proc = subprocess.run(
            [python, str(Path(__file__).with_name("nova_fit.py"))],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        if proc.returncode != 0:
            print(proc.stderr[-2000:])
            raise SystemExit(f"Nova's fitter failed in {python}")
        data = json.loads(proc.stdout)
        per_request = statistics.median(data["seconds"]) * 1000
        line(f"measured with {python}", f"{len(data['seconds'])} requests")
    line(
        "Nova, one request over every host",
        f"{per_request:.1f} ms",
        f"{per_request / engine_ms:.0f}x the engine's p50",
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hosts", type=int, nargs="+", default=[1000], help="fleet sizes")
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(
        f"nfvplace doors benchmark (seed {args.seed}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})"
    )
    vms = request_stream(args.requests, seed=args.seed + 1)
    for n in args.hosts:
        with tempfile.TemporaryDirectory(prefix="nfvplace-doors-") as tmp:
            folder = Path(tmp) / "hosts"
            folder.mkdir()
            write_fleet(folder, n, args.seed)
            vm_file = Path(tmp) / "vm.json"
            vm_file.write_text(nfvplace.dump(next(v for v in vms if v.cpu_sets), "json"))
            hosts = loading_section(folder, n)
            cli_section(folder, n, vm_file)
            engine_ms = library_section(hosts, vms)
            nova_section(hosts, vms, engine_ms)
        print(f"\nload average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
