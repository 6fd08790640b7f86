"""The Python around CP-SAT in the exact stage, this tree against another's, in one process
(issue 38).

    .venv/bin/python -m bench.exact_build --load /tmp/calls --base /work/wt/base

Replays the exact-stage calls `bench.exact_split --save` kept. The other tree's `engine/solver.py`,
`engine/direct.py` and `resources/nics/model.py` are loaded beside this tree's package (their
relative imports are ours: both flows read the same free parts and call the same kinds
otherwise), and each flow runs alternately first in blocks, CPU time:

- on the models the direct path leaves to CP-SAT: the direct path tried first (`direct_layout`,
  with the node costs it works out) and the build (`solver.build`, given those costs), µs a model;
- on every call: the whole stage (`solver.solve`, CP-SAT's solves included), ms a placement.

Before timing, every call's models are built both ways, the best layout's and the verdict's, whole
and with each family left out (as `blame` builds them), and their protos compared as text; the
direct path's answers and node costs, and the stage's answers, are compared too. Other work on
the two cores moves the microseconds: the load is printed.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from nfvplace.placement.engine import direct, solver
from nfvplace.placement.resources import nics
from nfvplace.placement.resources.direct import NoAnswer
from nfvplace.placement.resources.nics import model as nics_model

from .bench_placement import line
from .compare_trees import module_of_tree

Call = tuple[Any, ...]  # (free, request, allowed, options, skip, optimize), as `attempt.solve` has


class Flow:
    """One tree's exact stage: its solver and direct path, and the NICs' model part it posts."""

    def __init__(self, solver_: ModuleType, direct_: ModuleType, post: Any) -> None:
        self.solver, self.direct, self.post = solver_, direct_, post

    @contextmanager
    def active(self) -> Iterator[None]:
        """The NICs kind posts this flow's model part (the kind calls it by the package's name)."""
        kept = nics.post_interfaces
        nics.post_interfaces = self.post
        try:
            yield
        finally:
            nics.post_interfaces = kept


def flows(base: Path) -> dict[str, Flow]:
    other_direct = module_of_tree(base, direct)
    other_solver = module_of_tree(base, solver)
    other_solver.direct_layout = other_direct.direct_layout  # its solver calls its direct path
    other_post = module_of_tree(base, nics_model).post_interfaces
    return {
        "base": Flow(other_solver, other_direct, other_post),
        "this tree": Flow(solver, direct, nics_model.post_interfaces),
    }


def protos(flow: Flow, calls: list[Call]) -> list[Any]:
    """Every model of every call as proto text, the direct path's answers and node costs, and
    the stage's answers."""
    out: list[Any] = []
    families = [frozenset()] + [frozenset({f}) for f in solver.FAMILIES]
    with flow.active():
        for free, request, allowed, options, skip, optimize in calls:
            for best in (True, False):
                prices: dict[tuple[int, int], int] = {}
                found = flow.direct.direct_layout(free, request, allowed, options, best, prices)
                out.append((repr(found), sorted(prices.items())))
                for left_out in families:
                    given = None if left_out else prices
                    ctx = flow.solver.build(free, request, allowed, options, left_out, best, given)
                    out.append(None if ctx is None else str(ctx.model.proto))
            out.append(repr(flow.solver.solve(free, request, allowed, options, skip, optimize)))
    return out


def _cp_sat_models(calls: list[Call]) -> list[Call]:
    return [c for c in calls if direct.direct_layout(*c[:4], c[5]) is NoAnswer.unsure]


def _time(flow: Flow, left: list[Call], calls: list[Call]) -> tuple[float, float, float]:
    """CPU seconds: the direct path tried first and the build over the CP-SAT models, and the
    whole stage over every call."""
    clock = time.process_time
    tried = built = 0.0
    with flow.active():
        for free, request, allowed, options, skip, optimize in left:
            prices: dict[tuple[int, int], int] = {}
            t0 = clock()
            flow.direct.direct_layout(free, request, allowed, options, optimize, prices)
            t1 = clock()
            flow.solver.build(free, request, allowed, options, skip, optimize, prices)
            t2 = clock()
            tried, built = tried + t1 - t0, built + t2 - t1
        t0 = clock()
        for call in calls:
            flow.solver.solve(*call)
        stage = clock() - t0
    return tried, built, stage


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--load", required=True, help="calls kept by bench.exact_split --save")
    parser.add_argument("--base", required=True, help="the other tree")
    parser.add_argument("--blocks", type=int, default=12)
    args = parser.parse_args()
    with open(args.load, "rb") as f:
        kept, placements = pickle.load(f)
    calls: list[Call] = [pickle.loads(c) for c in kept]
    both = flows(Path(args.base))
    seen = {who: protos(flow, calls) for who, flow in both.items()}
    models = sum(
        isinstance(p, str) and p.startswith(("variables", "constraints")) for p in seen["base"]
    )
    differ = sum(a != b for a, b in zip(seen["base"], seen["this tree"], strict=True))
    print(
        f"{len(calls)} calls: {models} models' protos, answers and node costs compared: {differ} differ"
    )
    assert differ == 0
    left = _cp_sat_models(calls)
    gc.collect()
    gc.freeze()
    spent: dict[str, list[tuple[float, float, float]]] = {who: [] for who in both}
    for block in range(args.blocks):
        order = list(both) if block % 2 == 0 else list(reversed(both))
        for who in order:
            spent[who].append(_time(both[who], left, calls))
    print(
        f"{len(left)} CP-SAT models of {placements} placements, {args.blocks} blocks, "
        f"load {os.getloadavg()[0]:.1f}; best / median of the blocks:"
    )
    parts: dict[str, Callable[[tuple[float, float, float]], float]] = {
        "direct path tried, us a CP-SAT model": lambda s: 1e6 * s[0] / len(left),
        "build, us a CP-SAT model": lambda s: 1e6 * s[1] / len(left),
        "direct tried + build, us a CP-SAT model": lambda s: 1e6 * (s[0] + s[1]) / len(left),
        "whole stage (CP-SAT too), ms a placement": lambda s: 1e3 * s[2] / placements,
    }
    for part, of in parts.items():
        best = {who: min(map(of, v)) for who, v in spent.items()}
        med = {who: statistics.median(map(of, v)) for who, v in spent.items()}
        line(
            f"  {part}: base / this tree",
            f"{best['base']:.3f} / {best['this tree']:.3f} "
            f"({med['base']:.3f} / {med['this tree']:.3f})",
            f"{best['this tree'] / best['base']:.3f} ({med['this tree'] / med['base']:.3f})",
        )


if __name__ == "__main__":
    main()
