"""Classes of disagreement between Nova's fitter and nfvplace, each with its counterfactual.

A class is named by the first test that explains a disagreement:

- Nova's own errors, shown on Nova's side alone (bench/nova_side.py computes them): its fit cache
  keyed on guest cell ids it overwrites (a stale pinning, or a fit missed); a failed try that
  leaves its page size on the guest cell (`any`/`large` then means the first host cell's size);
  `isolate` on SMT hosts with `cpu_dedicated_set` (bug #1889633).
- A flavor one side refuses.
- Readings that differ: each takes its cause away on both sides (the flavor or the host changed)
  and asks both again; the class holds when they then agree. These are the phase-2 items of
  issue 21 (and the PCI affinity nfvplace keeps stricter on multi-node guests).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

NOVA_WRONG = "nova wrong"
PHASE_2 = "reads differently (phase 2)"
DIFFERENT = "reads differently"

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
    "mem_page_size=any": PHASE_2,
    "mem_page_size=large": PHASE_2,
    "pci_numa_affinity_policy preferred/socket": PHASE_2,
    "PCI device on a multi-node guest": PHASE_2,
    "require on more than 2 threads per core": PHASE_2,
    "require with an odd vCPU count": DIFFERENT,
    "core with a host-reserved thread (isolate/require)": PHASE_2,
    "several phase-2 causes": PHASE_2,
}

Flavor = dict[str, Any]
View = dict[str, Any]
Transform = Callable[[Flavor, View], tuple[Flavor, View] | None]


def _specs(flavor: Flavor) -> dict[str, str]:
    specs: dict[str, str] = flavor["extra_specs"]
    return specs


def _page_any(flavor: Flavor, view: View) -> tuple[Flavor, View] | None:
    if _specs(flavor).get("hw:mem_page_size") != "any":
        return None
    out = copy.deepcopy(flavor)
    del out["extra_specs"]["hw:mem_page_size"]
    return out, view


def _page_large(flavor: Flavor, view: View) -> tuple[Flavor, View] | None:
    if _specs(flavor).get("hw:mem_page_size") != "large":
        return None
    out = copy.deepcopy(flavor)
    nodes = int(_specs(flavor).get("hw:numa_nodes", "1"))
    mems = [
        int(_specs(flavor).get(f"hw:numa_mem.{k}", flavor["ram"] // nodes)) for k in range(nodes)
    ]
    out["extra_specs"]["hw:mem_page_size"] = "1GB" if all(m % 1024 == 0 for m in mems) else "2MB"
    return out, view


def _pci_policy(flavor: Flavor, view: View) -> tuple[Flavor, View] | None:
    if _specs(flavor).get("hw:pci_numa_affinity_policy") not in ("preferred", "socket"):
        return None
    out = copy.deepcopy(flavor)
    out["extra_specs"]["hw:pci_numa_affinity_policy"] = "required"
    return out, view


def _pci_multinode(flavor: Flavor, view: View) -> tuple[Flavor, View] | None:
    specs = _specs(flavor)
    if "pci_passthrough:alias" not in specs or int(specs.get("hw:numa_nodes", "1")) < 2:
        return None
    out = copy.deepcopy(flavor)
    del out["extra_specs"]["pci_passthrough:alias"]
    out["extra_specs"].pop("hw:pci_numa_affinity_policy", None)
    return out, view


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
            free = pool["total"] - pool["used"] - pool.get("reserved", 0)
            if pool["size_kb"] > 4 and free > 0:
                pool["total"] -= free
                cell["memory"] -= free * pool["size_kb"] // 1024
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
    wide = any(len(s) > 2 for c in view["cells"] for s in c["siblings"])
    if _specs(flavor).get("hw:cpu_thread_policy") != "require" or not wide:
        return None
    out = copy.deepcopy(view)
    for cell in out["cells"]:
        cell["siblings"] = [s[i : i + 2] for s in cell["siblings"] for i in range(0, len(s), 2)]
    return flavor, out


def _reserved_thread(flavor: Flavor, view: View) -> tuple[Flavor, View] | None:
    if _specs(flavor).get("hw:cpu_thread_policy") not in ("isolate", "require"):
        return None
    out = copy.deepcopy(view)
    changed = False
    for cell in out["cells"]:
        usable = set(cell["pcpuset"]) | set(cell["cpuset"])
        for core in cell["siblings"]:
            if set(core) - usable and set(core) & set(cell["pcpuset"]):
                cell["pcpuset"] = [pu for pu in cell["pcpuset"] if pu not in core]
                cell["pinned_cpus"] = [pu for pu in cell["pinned_cpus"] if pu not in core]
                changed = True
    return (flavor, out) if changed else None


def _odd_require(flavor: Flavor, view: View) -> tuple[Flavor, View] | None:
    """Nova's `require` leaves the sibling of an odd vCPU free (for the emulator thread, or other
    VMs); nfvplace isolates it. Taken away on nfvplace's side: the odd vCPU may share its core."""
    specs = _specs(flavor)
    nodes = int(specs.get("hw:numa_nodes", "1"))
    sizes = [
        len(specs[f"hw:numa_cpus.{k}"].split(",")) if f"hw:numa_cpus.{k}" in specs else 0
        for k in range(nodes)
    ]
    odd = any(n % 2 for n in sizes) or (not any(sizes) and (flavor["vcpus"] // nodes) % 2)
    if specs.get("hw:cpu_thread_policy") != "require" or not odd:
        return None
    return {**flavor, "relax": "odd_require"}, view


def relax(vm: Any, how: str | None) -> Any:
    """nfvplace's side of a one-sided counterfactual (`_odd_require`)."""
    if how != "odd_require":
        return vm
    from nfvplace.models.vmd import ThreadPolicy

    sets = [
        cs.model_copy(update={"thread_policy": ThreadPolicy.prefer}) if cs.single_vcpus else cs
        for cs in vm.cpu_sets
    ]
    return vm.model_copy(update={"cpu_sets": tuple(sets)})


COUNTERFACTUALS: tuple[tuple[str, Transform], ...] = (
    ("nova: a shared guest's memory checked against hugepages and reserved memory", _shared_hugepage_memory),
    ("nova (vcpu_pin_set): floating vCPUs on pinned CPUs", _legacy_floating),
    ("require with an odd vCPU count", _odd_require),
    ("mem_page_size=any", _page_any),
    ("mem_page_size=large", _page_large),
    ("pci_numa_affinity_policy preferred/socket", _pci_policy),
    ("PCI device on a multi-node guest", _pci_multinode),
    ("require on more than 2 threads per core", _smt4),
    ("core with a host-reserved thread (isolate/require)", _reserved_thread),
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
        for name, transform in (*COUNTERFACTUALS, ("several phase-2 causes", _all_of)):
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
