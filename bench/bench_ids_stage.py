"""The ids stage and the shared decide alone, inside the engine's loop (issue 38, thirteenth
round, second pass): `bench_small_stages`' two fleets in one process (the cut `shared_decide`
switched off in the old one), alternating blocks, with the CPU time spent in
`engine/assign.py` `build_configuration` (the ids stage: the kinds' `assign` and the build) and in
`SharedKind.decide` summed per fleet, and in the VM Configuration's validation alone
(`ConfigurationDraft.build`). The whole placement's CPU is printed too, and the
configurations are checked equal.

    .venv/bin/python -m bench.bench_ids_stage                  # 10,000 hosts, 2,000 requests
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from nfvplace.fleet import Fleet
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement.engine import attempt as attempt_module
from nfvplace.placement.resources.draft import ConfigurationDraft
from nfvplace.placement.resources.shared import SharedKind

from .bench_small_stages import _same, switched_off
from .hostgen import make_fleet, request_stream

CUTS = ("shared_decide",)
_ATTEMPT: Any = attempt_module  # its `build_configuration` is the one `attempt` calls


class Spent:
    """CPU seconds inside the ids stage and the shared decide while it is entered."""

    def __init__(self) -> None:
        self.ids = 0.0
        self.decide = 0.0
        self.build = 0.0

    @contextmanager
    def timing(self) -> Iterator[None]:
        build, decide = _ATTEMPT.build_configuration, SharedKind.decide
        validated = ConfigurationDraft.build

        def timed(real: Callable[..., Any], slot: str) -> Callable[..., Any]:
            def wrapper(*args: Any) -> Any:
                start = time.process_time()
                try:
                    return real(*args)
                finally:
                    setattr(self, slot, getattr(self, slot) + time.process_time() - start)

            return wrapper

        _ATTEMPT.build_configuration = timed(build, "ids")
        SharedKind.decide = timed(decide, "decide")  # type: ignore[method-assign]
        ConfigurationDraft.build = timed(validated, "build")  # type: ignore[method-assign]
        try:
            yield
        finally:
            _ATTEMPT.build_configuration = build
            SharedKind.decide = decide  # type: ignore[method-assign]
            ConfigurationDraft.build = validated  # type: ignore[method-assign]


def _block(
    fleet: Fleet, vms: Sequence[VmDescriptor], off: Sequence[str], spent: Spent
) -> tuple[float, list[tuple[VmConfiguration, ...]]]:
    out = []
    with switched_off(off), spent.timing():
        start = time.process_time()
        for vm in vms:
            out.append(fleet.place(vm).configurations)
        whole = time.process_time() - start
    return whole, out


def run(hosts: int, requests: int, block: int) -> None:
    given = make_fleet(hosts, seed=0)
    fleets = {"old": Fleet(given), "new": Fleet(given)}
    gc.collect()
    gc.freeze()
    vms = request_stream(requests + 40, seed=1)
    for vm in vms[:40]:
        _same(
            _block(fleets["old"], [vm], CUTS, Spent())[1],
            _block(fleets["new"], [vm], (), Spent())[1],
        )
    spent = {"old": Spent(), "new": Spent()}
    whole = {"old": 0.0, "new": 0.0}
    ratios = []
    timed = vms[40:]
    for k in range(0, len(timed), block):
        part = timed[k : k + block]
        order = ["old", "new"] if (k // block) % 2 == 0 else ["new", "old"]
        before = {name: spent[name].ids for name in order}
        outs = {}
        for name in order:
            seconds, outs[name] = _block(
                fleets[name], part, CUTS if name == "old" else (), spent[name]
            )
            whole[name] += seconds
        _same(outs["old"], outs["new"])
        ratios.append((spent["new"].ids - before["new"]) / (spent["old"].ids - before["old"]))
    n = len(timed)
    print(f"{hosts} hosts, {n} requests in blocks of {block}, alternately first; CPU time")
    for name in ("old", "new"):
        s = spent[name]
        print(
            f"  {name}: ids stage {s.ids * 1000 / n:.4f} ms a placement (the build "
            f"{s.build * 1000 / n:.4f}), shared decide "
            f"{s.decide * 1000 / n:.4f}, whole placement {whole[name] * 1000 / n:.3f}"
        )
    print(
        f"  new / old: ids {spent['new'].ids / spent['old'].ids:.3f} (per block median "
        f"{statistics.median(ratios):.3f}), build {spent['new'].build / spent['old'].build:.3f}, "
        f"decide {spent['new'].decide / spent['old'].decide:.3f}, "
        f"whole {whole['new'] / whole['old']:.3f}; every configuration equal; load average "
        f"{os.getloadavg()[0]:.1f}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--block", type=int, default=50)
    args = parser.parse_args(argv)
    run(args.hosts, args.requests, args.block)


if __name__ == "__main__":
    main()
