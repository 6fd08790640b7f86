"""How often the engine's exact stage solves a model it has solved before (issue 38: would a memo of
CP-SAT answers pay?).

    .venv/bin/python -m bench.solve_reuse                 # 10,000 hosts, the Nova pass, decisions
    .venv/bin/python -m bench.solve_reuse --quick         # 2,000 hosts, 300 Nova hosts, no decisions

CP-SAT with one worker, a fixed seed and the same parameters answers the same model proto the same
way (when it proves its answer before the time limit), so a per-process memo keyed by the proto
could hand back a solution without solving. Whether it pays depends on how often a model repeats,
and on what computing the key costs. This counts, on three workloads, every `CpSolver.solve` the
exact stage makes, and how many met a model already solved in the same workload:

- `same proto`: the same proto text and the same solver parameters (what a memo of solutions keyed
  by the model may reuse, for the best layout as for a verdict);
- `no names`: the same with variable and constraint names left out (PCI addresses, node ids);
- `free parts`: the same request object, host free parts (every kind's, by value), allowed nodes,
  options and flags: a key taken before the model is built (it would save the build too);
- `verdict, clamped`: for verdicts (`optimize=False`: a filter asks only whether a layout exists),
  the same after every linear constraint's bounds are clamped to what its left side can reach from
  its variables' domains: that gives the same set of solutions, hence the same verdict, so it
  bounds what a verdict memo keyed by the capacities a request can use could reuse.

It prints the milliseconds of a solve (CP-SAT alone; building the model is as much again) and of
computing the key from the proto (its text: this OR-Tools' Python proto has no binary form), with
the machine's load: other work on the two cores moves these times, never the counts.

Workloads: `Fleet.place` over the realistic mix of `bench.hostgen` (the engine bench's, as
`bench.bench_engine_scale` runs it); one cold `NfvplaceFilter` pass per flavor of
`bench.nova_candidates` over its realistic hosts, the service's route without HTTP (as
`bench/nova_cold_split.py` runs it); and the decision corpus of `bench.decisions`.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import os
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ortools.sat.python import cp_model

import nfvplace
from nfvplace.placement.engine import attempt

from . import decisions, nova_cold_split
from .bench_placement import line
from .hostgen import make_fleet, request_stream
from .nova_candidates import FLAVORS, host

NAMES = re.compile(r'\s*name: "[^"]*"')


def clamped(proto: Any) -> tuple[object, ...]:
    """The model with every single-interval linear constraint's bounds clamped to the range its
    left side can reach over its variables' domains (names left out): the same solutions."""
    domains = [tuple(v.domain) for v in proto.variables]
    out: list[object] = [tuple(domains)]
    for c in proto.constraints:
        if not c.has_linear() or len(c.linear.domain) != 2:
            out.append(NAMES.sub("", str(c)))
            continue
        low = high = 0
        for var, coeff in zip(c.linear.vars, c.linear.coeffs, strict=True):
            ends = (coeff * domains[var][0], coeff * domains[var][-1])
            low, high = low + min(ends), high + max(ends)
        lo, hi = c.linear.domain
        bounds = (max(lo, low), min(hi, high))
        if bounds[0] > bounds[1]:
            bounds = (lo, hi)
        out.append(
            (tuple(c.enforcement_literal), tuple(c.linear.vars), tuple(c.linear.coeffs), bounds)
        )
    return tuple(out)


def frozen(value: object) -> object:
    """`value` as a hashable of its contents, in its order (dataclasses field by field)."""
    if value is None or isinstance(value, int | float | str | enum.Enum):
        return value
    if isinstance(value, tuple | list):
        return (type(value).__name__, *map(frozen, value))
    if isinstance(value, dict):
        return ("dict", *((frozen(k), frozen(v)) for k, v in value.items()))
    if isinstance(value, set | frozenset):
        return ("set", *map(frozen, value))
    if dataclasses.is_dataclass(value):
        fields = dataclasses.fields(value)
        return (type(value).__name__, *(frozen(getattr(value, f.name)) for f in fields))
    return (type(value).__name__, repr(value))


class Repeats:
    """Every solve of one workload and how many met a model solved before."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.seen: dict[str, set[object]] = {
            kind: set() for kind in ("proto", "anon", "clamped", "parts")
        }
        self.solve_s = self.key_s = self.parts_s = 0.0
        self.requests: list[object] = []  # kept alive: their ids stay theirs

    def record_inputs(self, free: Any, request: object, *rest: object) -> None:
        t0 = time.perf_counter()
        key = (id(request), free.node_ids, frozen(tuple(free.parts.items())), frozen(rest))
        self.parts_s += time.perf_counter() - t0
        self.requests.append(request)
        self.counts["calls"] += 1
        self.counts["parts"] += key in self.seen["parts"]
        self.seen["parts"].add(key)

    def record(self, model: cp_model.CpModel, params: str) -> None:
        verdict = not model.has_objective()
        t0 = time.perf_counter()
        text = str(model.proto)
        self.key_s += time.perf_counter() - t0
        keys: dict[str, object] = {"proto": (text, params), "anon": (NAMES.sub("", text), params)}
        if verdict:
            keys["clamped"] = (clamped(model.proto), params)
        self.counts["solves"] += 1
        self.counts["verdicts"] += verdict
        for kind, key in keys.items():
            self.counts[kind] += key in self.seen[kind]
            self.seen[kind].add(key)

    def report(self, label: str) -> None:
        n = self.counts["solves"]
        verdicts = self.counts["verdicts"]
        print(f"\n{label}: {n} solves ({verdicts} verdicts)")
        if not n:
            return
        for kind, text in (("proto", "same proto"), ("anon", "no names")):
            line(f"  {text}: repeats", f"{self.counts[kind]} ({100 * self.counts[kind] / n:.1f} %)")
        if verdicts:
            hits = self.counts["clamped"]
            line("  verdict, clamped: repeats", f"{hits} ({100 * hits / verdicts:.1f} %)")
        calls, hits = self.counts["calls"], self.counts["parts"]
        line(f"  free parts: repeats of {calls} calls", f"{hits} ({100 * hits / calls:.1f} %)")
        line("  key (the free parts, frozen), mean", f"{1000 * self.parts_s / calls:.3f} ms")
        line("  CP-SAT solve, mean", f"{1000 * self.solve_s / n:.3f} ms")
        line("  key (the proto's text), mean", f"{1000 * self.key_s / n:.3f} ms")


@contextmanager
def counted(repeats: Repeats) -> Iterator[None]:
    """Every `CpSolver.solve` in the block recorded in `repeats` (and timed)."""
    solve = cp_model.CpSolver.solve

    def recorded(self: cp_model.CpSolver, model: cp_model.CpModel, *args: Any) -> Any:
        repeats.record(model, str(self.parameters))
        t0 = time.perf_counter()
        try:
            return solve(self, model, *args)
        finally:
            repeats.solve_s += time.perf_counter() - t0

    exact = attempt.solve

    def inputs(*args: Any, **kwargs: Any) -> Any:
        repeats.record_inputs(*args, *kwargs.values())
        return exact(*args, **kwargs)

    cp_model.CpSolver.solve = recorded  # type: ignore[method-assign]
    attempt.solve = inputs
    try:
        yield
    finally:
        cp_model.CpSolver.solve = solve  # type: ignore[method-assign]
        attempt.solve = exact


def engine(size: int, requests: int) -> Callable[[], None]:
    fleet = nfvplace.Fleet(make_fleet(size, seed=10))
    vms = request_stream(requests + 20, seed=11)
    for vm in vms[:20]:  # warm-up, as the engine bench
        fleet.place(vm)

    def run() -> None:
        for vm in vms[20:]:
            fleet.place(vm)

    return run


def nova(hosts: int, flavor: dict[str, Any]) -> Callable[[], None]:
    views = [host(random.Random(1), "warm-up")]
    nova_cold_split.split(views, FLAVORS[0])  # loads the solver and the readers
    rng = random.Random(1)
    views = [host(rng, f"compute-{k:04d}") for k in range(hosts)]

    def run() -> None:
        nova_cold_split.split(views, flavor)  # forgets what the service held first

    return run


def corpus(cases: int) -> Callable[[], None]:
    def run() -> None:
        for _ in decisions.snapshot(cases, 0):
            pass

    return run


Workload = tuple[str, Callable[[], Callable[[], None]]]
"""A label and what prepares the run (the run itself is timed or counted, its preparation not)."""


def arguments(doc: str) -> argparse.Namespace:
    """The options of the benches over these workloads (this one and `direct_coverage`)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 hosts, 300 Nova hosts")
    parser.add_argument("--requests", type=int, default=1000)
    return parser.parse_args()


def workloads(quick: bool, requests: int) -> list[Workload]:
    """The engine's mix at 10,000 hosts (2,000 quick) and Nova's cold pass at 1,000 hosts (300
    quick) for each flavor."""
    size, nova_hosts = (2000, 300) if quick else (10000, 1000)
    return [
        (f"engine, {size} hosts, {requests} requests of the mix", lambda: engine(size, requests)),
        *(
            (
                f"Nova cold pass, {nova_hosts} hosts, flavor {f['name']}",
                lambda f=f: nova(nova_hosts, f),
            )
            for f in FLAVORS
        ),
    ]


def main() -> None:
    args = arguments(__doc__ or "")
    print(f"exact-stage models seen again (load average {os.getloadavg()[0]:.1f})")
    runs = workloads(args.quick, args.requests)
    if not args.quick:
        runs.append(("bench.decisions corpus (3,000 cases)", lambda: corpus(3000)))
    for label, prepare in runs:
        run = prepare()
        repeats = Repeats()
        with counted(repeats):
            run()
        repeats.report(label)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
