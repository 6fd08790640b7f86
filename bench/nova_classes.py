"""Classes of disagreement between Nova's fitter and nfvplace, each with its counterfactual.

A class is named by the first test that explains a disagreement:

- Nova's own errors, shown on Nova's side alone (bench/nova_side.py computes them): its fit cache
  keyed on guest cell ids it overwrites (a stale pinning, or a fit missed); a failed try that
  leaves its page size on the guest cell (`any`/`large` then means the first host cell's size);
  `isolate` on SMT hosts with `cpu_dedicated_set` (bug #1889633).
- Nova's errors a counterfactual shows (the cause taken away on both sides, the flavor or the
  host changed, and both asked again; the class holds when they then agree): a shared guest's
  memory checked against the cell's whole memory, free hugepages and reserved pages included; in
  the legacy `vcpu_pin_set` layout, floating vCPUs on CPUs other guests pinned.
- A flavor one side refuses.
- A reading nfvplace keeps on purpose: `require` never puts a vCPU on a core whose other threads
  another VM or the host uses (Nova does on SMT4, with two or three free threads a core).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

NOVA_WRONG = "nova wrong"
DIFFERENT = "reads differently"
KEPT = "reads differently (decided)"
REQUIRE_SHARED_CORE = "require on an SMT4 core another VM or the host uses"

SIDE = {
    "nova fit cache: stale pinning": NOVA_WRONG,
    "nova fit cache: fit missed": NOVA_WRONG,
    "nova: a failed try fixes the guest cell's page size": NOVA_WRONG,
    "nova bug #1889633: isolate with cpu_dedicated_set": NOVA_WRONG,
    "nova: both bugs": NOVA_WRONG,
    "nova: a shared guest's memory checked against hugepages and reserved memory": NOVA_WRONG,
    "nova (vcpu_pin_set): floating vCPUs on pinned CPUs": NOVA_WRONG,
    "Nova refuses the flavor": DIFFERENT,
    "nfvplace refuses the flavor": "nfvplace wrong",
    REQUIRE_SHARED_CORE: KEPT,
    "several causes": KEPT,
}

Flavor = dict[str, Any]
View = dict[str, Any]
Transform = Callable[[Flavor, View], tuple[Flavor, View] | None]


def _specs(flavor: Flavor) -> dict[str, str]:
    specs: dict[str, str] = flavor["extra_specs"]
    return specs


def _shared_hugepage_memory(flavor: Flavor, view: View) -> tuple[Flavor, View] | None:
    """Nova checks an unpinned guest cell's memory against the host cell's whole memory less its
    usage: free hugepages and reserved small pages count as free normal memory (nfvplace takes
    normal memory from what is free of it). The host without free hugepages and without reserved
    small pages (the small pool shrunk by them: the same free normal memory) asks both the same."""
    specs = _specs(flavor)
    if specs.get("hw:cpu_policy", "shared") != "shared" or specs.get("hw:mem_page_size"):
        return None
    out = copy.deepcopy(view)
    changed = False
    for cell in out["cells"]:
        for pool in cell["mempages"]:
            unused = pool["total"] - pool["used"]  # free and reserved hugepages
            if pool["size_kb"] > 4 and unused > 0:
                pool["total"], pool["reserved"] = pool["used"], 0
                cell["memory"] -= unused * pool["size_kb"] // 1024
                changed = True
            if pool["size_kb"] == 4 and pool.get("reserved"):
                pool["total"] -= pool["reserved"]
                cell["memory"] -= pool["reserved"] * 4 // 1024
                pool["reserved"] = 0
                changed = True
    return (flavor, out) if changed else None


def _legacy_floating(flavor: Flavor, view: View) -> tuple[Flavor, View] | None:
    """In the legacy layout (`cpuset == pcpuset`) Nova floats an unpinned guest over the whole
    cpuset, CPUs pinned by other guests included (counting them against its vCPUs); nfvplace
    keeps it off pinned PUs. The host without its pinned CPUs (Nova's answer unchanged)."""
    if _specs(flavor).get("hw:cpu_policy", "shared") != "shared":
        return None
    out = copy.deepcopy(view)
    changed = False
    for cell in out["cells"]:
        if cell["pinned_cpus"] and set(cell["cpuset"]) == set(cell["pcpuset"]):
            cell["pinned_cpus"] = []
            changed = True
    return (flavor, out) if changed else None


def _smt4(flavor: Flavor, view: View) -> tuple[Flavor, View] | None:
    """The host with each SMT4 core split in two SMT2 ones: a core's two free threads beside a
    thread in use then make a whole core, for nfvplace's `require` as for Nova's."""
    wide = any(len(s) > 2 for c in view["cells"] for s in c["siblings"])
    if _specs(flavor).get("hw:cpu_thread_policy") != "require" or not wide:
        return None
    out = copy.deepcopy(view)
    for cell in out["cells"]:
        cell["siblings"] = [s[i : i + 2] for s in cell["siblings"] for i in range(0, len(s), 2)]
    return flavor, out


COUNTERFACTUALS: tuple[tuple[str, Transform], ...] = (
    (
        "nova: a shared guest's memory checked against hugepages and reserved memory",
        _shared_hugepage_memory,
    ),
    ("nova (vcpu_pin_set): floating vCPUs on pinned CPUs", _legacy_floating),
    (REQUIRE_SHARED_CORE, _smt4),
)


def _all_of(flavor: Flavor, view: View) -> tuple[Flavor, View] | None:
    applied = 0
    for _, transform in COUNTERFACTUALS:
        got = transform(flavor, view)
        if got is not None:
            flavor, view = got
            applied += 1
    return (flavor, view) if applied > 1 else None


def _direct(row: dict[str, Any], flavor: Flavor, view: View) -> str | None:
    """Classes read off one side's answers, without asking again."""
    nova = row["nova_answer"] or {}
    if row["nova"] and not nova.get("valid", True):
        return "nova fit cache: stale pinning"
    if row["nfvplace"] and not row["nova"] and nova.get("nocache"):
        return "nova fit cache: fit missed"
    if row["nfvplace"] and not row["nova"] and nova.get("fresh"):
        return "nova: a failed try fixes the guest cell's page size"
    if row["nfvplace"] and not row["nova"] and nova.get("legacy"):
        return "nova bug #1889633: isolate with cpu_dedicated_set"
    if row["nfvplace"] and not row["nova"] and nova.get("repaired"):
        return "nova: both bugs"
    if row["nova_refused"]:
        return "Nova refuses the flavor"
    if row["nfvplace_refused"]:
        return "nfvplace refuses the flavor"
    return None


def classify(
    data: dict[str, Any],
    rows: list[dict[str, Any]],
    run_nova: Callable[[dict[str, Any]], list[dict[str, Any]]],
    run_nfvplace: Callable[[dict[str, Any]], list[dict[str, Any]]],
    compare: Callable[..., list[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """One entry per disagreement: its class, both answers and the case."""
    out: list[dict[str, Any]] = []
    pending: list[tuple[dict[str, Any], list[tuple[str, int]]]] = []
    asked: list[dict[str, Any]] = []
    for row in rows:
        if row["nova"] == row["nfvplace"] or row["nova_no_topology"]:
            continue
        flavor = data["cases"][row["case"]]["flavor"]
        view = data["cases"][row["case"]]["hosts"][row["host"]]
        entry = {
            "class": _direct(row, flavor, view),
            "nova": row["nova"],
            "flavor": flavor,
            "host": view["host"],
            "nfvplace_refused": row["nfvplace_refused"],
            "nova_refused": row["nova_refused"],
        }
        out.append(entry)
        if entry["class"] is not None:
            continue
        tries = []
        for name, transform in (*COUNTERFACTUALS, ("several causes", _all_of)):
            got = transform(flavor, view)
            if got is not None:
                tries.append((name, len(asked)))
                asked.append({"flavor": got[0], "hosts": [got[1]]})
        pending.append((entry, tries))
    if asked:
        again = {"pci_alias": data["pci_alias"], "cases": asked}
        answers = compare(again, run_nova(again), run_nfvplace(again))
        for entry, tries in pending:
            agreed = [name for name, k in tries if answers[k]["nova"] == answers[k]["nfvplace"]]
            entry["class"] = agreed[0] if agreed else "unexplained"
    for entry in out:
        entry["class"] = entry["class"] or "unexplained"
    return out
