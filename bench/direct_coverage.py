"""How many of the exact stage's models the direct path answers without CP-SAT (issue 38), and
whether each answer is CP-SAT's.

    .venv/bin/python -m bench.direct_coverage                 # 10,000 hosts, 1,000 Nova hosts
    .venv/bin/python -m bench.direct_coverage --quick         # 2,000 hosts, 300 Nova hosts

Every call of the exact stage (`attempt.solve`) in two workloads is answered both ways: by
`engine/direct.py` (a layout, infeasible, or unsure: CP-SAT decides) and by CP-SAT alone
(`solver.solve_model`). It prints, per workload, the share of models the direct path answers, and
counts any answer that is not CP-SAT's (a best layout that differs in its nodes, values, costs or
objective, orders included; a verdict or an infeasibility that CP-SAT does not share): there must
be none. Workloads as in `bench.solve_reuse`: `Fleet.place` over the realistic mix of
`bench.hostgen` (the engine bench's), and one cold `NfvplaceFilter` pass per flavor of
`bench.nova_candidates` (verdicts).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from nfvplace.placement.engine import attempt, solver
from nfvplace.placement.engine.direct import MODEL_KINDS, direct_layout
from nfvplace.placement.resources.direct import NoAnswer
from nfvplace.placement.resources.model import Layout
from nfvplace.placement.resources.stages import ModelDirect

from .bench_placement import line
from .solve_reuse import arguments, workloads


def exactly(layout: Layout) -> tuple[object, ...]:
    values: list[tuple[str, list[tuple[Hashable, int]]]] = [
        (kind, list(kept.items())) for kind, kept in layout.values.items()
    ]
    costs = list(layout.costs.items())
    return (list(layout.nodes.items()), values, costs, layout.objective, layout.optimal)


def _same(direct: Layout | NoAnswer, cp_sat: Layout | solver.SolveFailure, optimize: bool) -> bool:
    if direct is NoAnswer.infeasible:
        return isinstance(cp_sat, solver.SolveFailure) and cp_sat.status == "infeasible"
    if not isinstance(direct, Layout) or not isinstance(cp_sat, Layout):
        return False
    return not optimize or exactly(direct) == exactly(cp_sat)


@contextmanager
def unsure_kinds() -> Iterator[set[str]]:
    """The names of the kinds whose `direct` said unsure since the set was last cleared."""
    said: set[str] = set()
    kinds = [k for k in MODEL_KINDS if isinstance(k, ModelDirect)]
    for kind in kinds:

        def asked(a: Any, kind: ModelDirect = kind, method: Any = kind.direct) -> Any:
            part = method(a)
            if part is NoAnswer.unsure:
                said.add(kind.name)
            return part

        setattr(kind, "direct", asked)  # noqa: B010 (an instance attribute over the method)
    try:
        yield said
    finally:
        for kind in kinds:
            delattr(kind, "direct")


@contextmanager
def compared(counts: Counter[str], times: Counter[str]) -> Iterator[None]:
    """Every exact-stage call in the block answered both ways, and counted."""
    exact = attempt.solve

    def both(
        free: Any,
        request: Any,
        allowed: Any,
        options: Any,
        skip: frozenset[str] = frozenset(),
        optimize: bool = True,
    ) -> Layout | solver.SolveFailure:
        said.clear()
        t0 = time.perf_counter()
        direct = direct_layout(free, request, allowed, options, optimize)
        t1 = time.perf_counter()
        cp_sat = solver.solve_model(free, request, allowed, options, skip, optimize)
        t2 = time.perf_counter()
        unsure = direct is NoAnswer.unsure
        times["direct"] += t1 - t0
        times["CP-SAT"] += t2 - t1
        times["direct, answered"] += (t1 - t0) * (not unsure)
        times["stage"] += (t1 - t0) + (t2 - t1) * unsure  # the direct path, CP-SAT when unsure
        counts["models"] += 1
        counts["verdicts"] += not optimize
        if unsure:
            counts["unsure"] += 1
            counts[f"unsure: {WHY.get(tuple(sorted(said)), ', '.join(sorted(said)))}"] += 1
        else:
            counts["infeasible" if direct is NoAnswer.infeasible else "layout"] += 1
            counts["differ"] += not _same(direct, cp_sat, optimize)
        return cp_sat

    attempt.solve = both
    try:
        with unsure_kinds() as said:
            yield
    finally:
        attempt.solve = exact


WHY = {
    (): "two assignments of nodes tie (under pack: their node costs), or a kind of the model has "
    "no direct stage"
}


def report(label: str, counts: Counter[str], times: Counter[str]) -> None:
    n = counts["models"]
    print(f"\n{label}: {n} models ({counts['verdicts']} verdicts)")
    if not n:
        return
    answered = counts["layout"] + counts["infeasible"]
    line("  answered without CP-SAT", f"{answered} ({100 * answered / n:.1f} %)")
    line("    a layout", f"{counts['layout']}")
    line("    infeasible", f"{counts['infeasible']}")
    line("  left to CP-SAT (unsure)", f"{counts['unsure']}")
    for key in sorted(k for k in counts if k.startswith("unsure: ")):
        line(f"    {key[len('unsure: ') :]} unsure", f"{counts[key]}")
    line("  direct answers that are not CP-SAT's", f"{counts['differ']} (must be 0)")
    cp_sat, stage = 1000 * times["CP-SAT"] / n, 1000 * times["stage"] / n
    line("  exact stage before: CP-SAT (built and solved), mean", f"{cp_sat:.3f} ms")
    line("  exact stage now: direct, CP-SAT when unsure, mean", f"{stage:.3f} ms")
    line("  now / before", f"{stage / cp_sat:.2f}")
    line("  direct path (tried), mean per model", f"{1000 * times['direct'] / n:.3f} ms")
    if answered:
        mean = 1000 * times["direct, answered"] / answered
        line("  direct path, mean per model it answers", f"{mean:.3f} ms")


def main() -> None:
    args = arguments(__doc__ or "")
    print(f"direct path coverage (load average {os.getloadavg()[0]:.1f})")
    differ = 0
    for label, prepare in workloads(args.quick, args.requests):
        run = prepare()
        counts: Counter[str] = Counter()
        times: Counter[str] = Counter()
        with compared(counts, times):
            run()
        report(label, counts, times)
        differ += counts["differ"]
    raise SystemExit(1 if differ else 0)


if __name__ == "__main__":
    main()
