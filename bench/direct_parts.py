"""The direct path's kinds, this tree against another's, in one process (issue 38).

    .venv/bin/python -m bench.direct_parts --load /tmp/prof/calls.pkl --base /work/wt/base

Replays the exact-stage calls `bench.exact_split --save` kept: every assignment of nodes of each
model the direct path asks (`engine/direct.py`) is asked of one kind alone (NICs, CPU, memory),
with the model's memo shared as `direct_layout` shares it, by this tree's `direct` module and by
the other tree's (loaded from its file beside this tree's package, so both read the same free
parts), alternately first in blocks; CPU time, best and median of the blocks. Each pass's parts
must be equal both ways. Other work on the two cores moves the microseconds: the load is printed.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from nfvplace.placement.engine import direct
from nfvplace.placement.options import Policy
from nfvplace.placement.resources import memory_direct
from nfvplace.placement.resources.cpu import direct as cpu_direct
from nfvplace.placement.resources.direct import Assignment
from nfvplace.placement.resources.nics import direct as nics_direct

from .bench_placement import line
from .compare_trees import module_of_tree

OURS: dict[str, ModuleType] = {"nics": nics_direct, "cpu": cpu_direct, "memory": memory_direct}


def _asks(module: ModuleType, name: str) -> Callable[[Assignment], Any]:
    if name == "nics":
        return lambda a: module.nics_direct(
            a, a.free.parts["nics"], a.options.policy is Policy.spread
        )
    if name == "cpu":
        return lambda a: module.cpu_direct(a, a.free.parts["cpu"])
    return lambda a: module.memory_direct(a, a.free.parts["memory"])


def models(calls: list[Any]) -> list[tuple[Any, ...]]:
    """Each model the kinds are asked of: its call's arguments and its assignments of nodes."""
    out = []
    for free, request, allowed, options, _skip, optimize in calls:
        if direct._kinds(request) is None or not request.cpu_sets:
            continue  # the kinds are not asked
        frozen = {
            cs.id: frozenset(n for n in free.node_ids if n in allowed.get(cs.id, ()))
            for cs in request.cpu_sets
        }
        taken = list(direct._assignments(request, frozen, free.node_ids))
        out.append((free, request, options, frozen, taken, optimize))
    return out


def run(kept: list[tuple[Any, ...]], ask: Callable[[Assignment], Any]) -> tuple[float, list[Any]]:
    parts = []
    t0 = time.process_time()
    for free, request, options, frozen, taken, optimize in kept:
        memo: dict[str, object] = {}
        for nodes in taken:
            parts.append(ask(Assignment(free, request, options, frozen, nodes, optimize, memo)))
    return time.process_time() - t0, parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", required=True, help="calls kept by bench.exact_split --save")
    parser.add_argument("--base", required=True, help="the other tree")
    parser.add_argument("--blocks", type=int, default=20)
    args = parser.parse_args()
    with open(args.load, "rb") as f:
        calls = [pickle.loads(c) for c in pickle.load(f)[0]]
    kept = models(calls)
    asked = sum(len(m[4]) for m in kept)
    gc.disable()
    print(f"{asked} assignments of {len(kept)} models; us an assignment, best / median:")
    for name in OURS:
        ours = _asks(OURS[name], name)
        theirs = _asks(module_of_tree(Path(args.base), OURS[name]), name)
        assert run(kept, theirs)[1] == run(kept, ours)[1], f"{name}: the parts differ"
        spent: dict[str, list[float]] = {"base": [], "this tree": []}
        for block in range(args.blocks):
            order = ("base", "this tree") if block % 2 == 0 else ("this tree", "base")
            for who in order:
                spent[who].append(run(kept, theirs if who == "base" else ours)[0])
        best = {who: 1e6 * min(v) / asked for who, v in spent.items()}
        med = {who: 1e6 * sorted(v)[len(v) // 2] / asked for who, v in spent.items()}
        line(
            f"  {name}: base / this tree",
            f"{best['base']:.1f} / {best['this tree']:.1f} ({med['base']:.1f} / "
            f"{med['this tree']:.1f})",
            f"{best['this tree'] / best['base']:.3f}",
        )
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
