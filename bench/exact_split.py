"""Where the exact stage's CP-SAT models spend their time, and the floor they put under a
placement (issue 38).

    .venv/bin/python -m bench.exact_split                      # 10,000 hosts, 1,000 requests
    .venv/bin/python -m bench.exact_split --save /tmp/calls    # ... and keep the calls
    .venv/bin/python -m bench.exact_split --load /tmp/calls    # replay kept calls (no fleet)

Every call of the exact stage (`attempt.solve`) in `Fleet.place` over the realistic mix of
`bench.hostgen` (the engine bench's, as `bench.solve_reuse` runs it) is captured as it is made
(pickled: later claims do not touch it), then replayed in one process, each part timed on its own
in CPU time (`time.process_time`, best and median of `--passes`):

- the models the direct path answers (`engine/direct.py`), and why it leaves the others to CP-SAT
  (two assignments of nodes at the lowest node cost under `pack`, or the kind that cannot say);
- for the models left to CP-SAT: the direct path tried first, the build (`solver.build`, through
  OR-Tools' `CpModel`, with the node costs the direct path worked out), CP-SAT's solve (`CpSolver.solve` with the engine's parameters), the
  read-back (`solver._layout`), and CP-SAT's fixed cost (the same solve of a two-variable model);
- per placement: each part times the CP-SAT models a placement meets on average. The solve is
  the floor the CP-SAT models put under a placement while they stay (their answers are CP-SAT's
  own search: no other path gives them), against issue 38's 1 ms.

Other work on the two cores moves the milliseconds, never the counts: the load average is printed.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from ortools.sat.python import cp_model

from nfvplace.placement.engine import attempt, direct, solver
from nfvplace.placement.resources.direct import NoAnswer

from .bench_placement import line
from .direct_coverage import unsure_kinds
from .solve_reuse import engine

Call = tuple[Any, ...]  # (free, request, allowed, options, skip, optimize), as `attempt.solve` has


def capture(size: int, requests: int) -> tuple[list[bytes], int]:
    """Every exact-stage call of `requests` placements on `size` hosts, pickled when made; prints
    the CPU time of the stage and of CP-SAT's solves as the loop spends it (the placements'
    other work in between leaves the caches colder than a replay does)."""
    run = engine(size, requests)
    calls: list[bytes] = []
    spent: Counter[str] = Counter()
    exact, cp_sat = attempt.solve, cp_model.CpSolver.solve
    clock = time.process_time

    def kept(
        free: Any,
        request: Any,
        allowed: Any,
        options: Any,
        skip: frozenset[str] = frozenset(),
        optimize: bool = True,
    ) -> Any:
        call = (free, request, allowed, options, skip, optimize)
        calls.append(pickle.dumps(call))
        t0 = clock()
        try:
            return exact(*call)
        finally:
            spent["stage"] += clock() - t0

    def solving(self: cp_model.CpSolver, *args: Any) -> Any:
        t0 = clock()
        try:
            return cp_sat(self, *args)
        finally:
            spent["solve"] += clock() - t0
            spent["solves"] += 1

    attempt.solve = kept
    cp_model.CpSolver.solve = solving  # type: ignore[method-assign]
    try:
        run()
    finally:
        attempt.solve = exact
        cp_model.CpSolver.solve = cp_sat  # type: ignore[method-assign]
    print(f"  in the loop ({requests} placements, CPU time, load {os.getloadavg()[0]:.1f}):")
    line("    exact stage, a placement", f"{1000 * spent['stage'] / requests:.3f} ms")
    line("    CP-SAT's solves, a placement", f"{1000 * spent['solve'] / requests:.3f} ms")
    line(
        "    CP-SAT's solves",
        f"{spent['solves']:.0f}, {1000 * spent['solve'] / max(spent['solves'], 1):.3f} ms each",
    )
    return calls, requests


def why_unsure(calls: list[Call]) -> tuple[list[Call], Counter[str]]:
    """The calls the direct path leaves to CP-SAT, and why."""
    reasons: Counter[str] = Counter()
    left: list[Call] = []
    tied = direct._tied_nodes
    exits: list[bool] = []

    def tied_nodes(*args: Any) -> bool:
        exits.append(tied(*args))
        return exits[-1]

    direct._tied_nodes = tied_nodes
    try:
        with unsure_kinds() as said:
            for c in calls:
                said.clear()
                exits.clear()
                found = direct.direct_layout(c[0], c[1], c[2], c[3], c[5])
                if found is not NoAnswer.unsure:
                    reasons["answered by the direct path"] += 1
                    continue
                left.append(c)
                if exits and exits[-1]:
                    reasons["CP-SAT: two assignments share the lowest node cost (pack)"] += 1
                else:
                    kinds = ", ".join(sorted(said)) or "a tie at the lowest objective"
                    reasons[f"CP-SAT: unsure: {kinds}"] += 1
    finally:
        direct._tied_nodes = tied
    return left, reasons


def _cp_sat(options: Any) -> cp_model.CpSolver:
    """A solver with the engine's parameters (`solver.solve_model`)."""
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = options.seed
    s.parameters.max_time_in_seconds = options.time_limit_s
    s.parameters.cp_model_presolve = False
    s.parameters.linearization_level = 0
    return s


def _tiny() -> cp_model.CpModel:
    model = cp_model.CpModel()
    a, b = model.new_bool_var("a"), model.new_bool_var("b")
    model.add_bool_or([a, b])
    model.minimize(a + b)
    return model


def split(left: list[Call], passes: int) -> dict[str, list[float]]:
    """ms a model of each part, one list entry a pass."""
    parts = ("direct path, tried first", "build", "solve", "read-back", "CP-SAT's fixed cost")
    times: dict[str, list[float]] = {p: [] for p in parts}
    tiny = _tiny()
    clock = time.process_time
    for _ in range(passes):
        spent = dict.fromkeys(parts, 0.0)
        for free, request, allowed, options, skip, optimize in left:
            prices: direct.NodePrices = {}
            t0 = clock()
            direct.direct_layout(free, request, allowed, options, optimize, prices)
            t1 = clock()
            ctx = solver.build(free, request, allowed, options, skip, optimize, prices)
            t2 = clock()
            assert ctx is not None
            s = _cp_sat(options)
            status = s.solve(ctx.model)
            t3 = clock()
            solver._layout(ctx, s, status == cp_model.OPTIMAL)
            t4 = clock()
            _cp_sat(options).solve(tiny)
            t5 = clock()
            for part, seconds in zip(
                parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True
            ):
                spent[part] += seconds
        for part in parts:
            times[part].append(1000 * spent[part] / len(left))
    return times


def report(calls: int, placements: int, left: int, reasons: Counter[str], times: Any) -> None:
    print(f"\n{placements} placements, {calls} exact-stage calls")
    for reason, n in sorted(reasons.items()):
        line(f"  {reason}", f"{n}")
    per = left / placements
    line("CP-SAT models a placement", f"{per:.3f}")
    med: Callable[[list[float]], float] = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    print("  ms a CP-SAT model (best / median of the passes), and a placement's share (median):")
    total = 0.0
    for part, v in times.items():
        share = med(v) * per
        if part != "CP-SAT's fixed cost":
            total += share
        line(f"    {part}", f"{min(v):.3f} / {med(v):.3f}", f"{share:.3f} ms a placement")
    line(
        "  the CP-SAT models, a placement (direct tried + build + solve + read-back)",
        f"{total:.3f}",
    )
    solve = med(times["solve"]) * per
    line(
        "  floor while they stay: the solve alone, a placement", f"{solve:.3f} ms", "of p50 ≤ 1 ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--save", help="keep the captured calls in this file")
    parser.add_argument("--load", help="replay the calls kept in this file (no fleet built)")
    args = parser.parse_args()
    print(f"the exact stage's CP-SAT models (load average {os.getloadavg()[0]:.1f})")
    if args.load:
        with open(args.load, "rb") as f:
            kept, placements = pickle.load(f)
    else:
        kept, placements = capture(args.size, args.requests)
        if args.save:
            with open(args.save, "wb") as f:
                pickle.dump((kept, placements), f)
    calls = [pickle.loads(c) for c in kept]
    left, reasons = why_unsure(calls)
    gc.collect()
    gc.freeze()
    times = split(left, args.passes)
    report(len(calls), placements, len(left), reasons, times)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
