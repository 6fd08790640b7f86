"""nfvplace in Nova's own loop: Nova's functional harness (bench/nova_harness.py, in the Nova
virtualenv) behind a real `nfvplace serve`.

    from bench import nova_loop
    result = nova_loop.boot(
        hosts=[{"name": "compute1", "nodes": 2, "cores": 4, "threads": 2, "memory_mib": 8192,
                "pages": {"2048": 1024}, "cpu_dedicated_set": "2-7,10-15",
                "cpu_shared_set": "0,1,8,9"}],
        flavor={"name": "pinned", "vcpus": 2, "ram": 1024,
                "extra_specs": {"hw:cpu_policy": "dedicated", "hw:mem_page_size": "2MB"}},
    )
    result["status"], result["host"], result["numa_topology"], result["domain_xml"]

`run_plan(plan)` runs a whole plan (boots, deletes, snapshots; see bench/nova_harness.py) and
returns its record. Both start `nfvplace serve` (SQLite, a reader token) unless given a `url`, and
build the Nova virtualenv with the harness's packages on first use (`bash bench/nova_venv.sh
--harness`; `NFVPLACE_NOVA_PYTHON` names another one, completed the same way).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "bench" / "nova_harness.py"
TOKEN = "nova-scheduler-token-0123456789"
DOCUMENTED_FILTERS = ("NUMATopologyFilter", "NfvplaceFilter")
"""What docs/integrations/nova.md appends to the operator's enabled_filters."""


def nova_python() -> str:
    """The Nova virtualenv's Python, with the harness's packages (built once, under a lock)."""
    given = os.environ.get("NFVPLACE_NOVA_PYTHON")
    venv = Path(given).parent.parent if given else ROOT / ".bench" / "nova-venv"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with (venv.parent / "nova-venv.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            ["bash", str(ROOT / "bench" / "nova_venv.sh"), "--harness"],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "NOVA_VENV": str(venv)},
        )
    if done.returncode != 0:
        raise RuntimeError(f"bench/nova_venv.sh --harness failed:\n{done.stderr[-3000:]}")
    return str(venv / "bin" / "python")


@contextmanager
def service() -> Iterator[tuple[str, str]]:
    """A real `nfvplace serve` and the file holding its reader token: (url, token_file)."""
    from tests.live_serve import serve

    with tempfile.TemporaryDirectory(prefix="nfvplace-nova-loop-") as folder:
        token_file = Path(folder) / "nova.token"
        token_file.write_text(TOKEN + "\n")
        with serve(Path(folder), {"reader": [TOKEN]}) as url:
            yield url, str(token_file)


def run_plan(plan: dict[str, Any], python: str | None = None) -> dict[str, Any]:
    """Run a plan in Nova's harness; a `nfvplace serve` is started for it unless it names a url.
    Raises RuntimeError, with the harness's own report, when the harness itself failed."""
    python = python or nova_python()
    if not plan.get("url"):
        with service() as (url, token_file):
            return run_plan({**plan, "url": url, "token_file": token_file}, python)
    with tempfile.TemporaryDirectory(prefix="nova-harness-") as folder:
        plan_file, result_file = Path(folder) / "plan.json", Path(folder) / "result.json"
        plan_file.write_text(json.dumps(plan))
        done = subprocess.run(
            [python, str(HARNESS), str(plan_file), str(result_file)],
            capture_output=True,
            text=True,
            check=False,
            cwd=folder,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        if not result_file.exists():
            raise RuntimeError(f"Nova's harness did not run:\n{done.stderr[-4000:]}")
        result: dict[str, Any] = json.loads(result_file.read_text())
    if result.get("error"):
        raise RuntimeError(f"Nova's harness failed:\n{result['error'][-6000:]}")
    return result


def boot(
    hosts: Sequence[dict[str, Any]],
    flavor: dict[str, Any],
    filters: Sequence[str] = DOCUMENTED_FILTERS,
    **plan: Any,
) -> dict[str, Any]:
    """Boot one flavor on fresh hosts of these shapes: the boot's status, host, fault, the
    instance NUMA topology and domain XML Nova built, with the filtering pass's verdicts and any
    claim the compute refused (`verdicts`, `claims_refused`)."""
    steps = [{"boot": flavor, "name": "server"}]
    result = run_plan({"hosts": list(hosts), "filters": list(filters), "steps": steps, **plan})
    return {
        **result["steps"][0],
        "verdicts": result["verdicts"],
        "claims_refused": result["claims_refused"],
    }


# The loop: fill, delete, refill on fake libvirt NUMA hosts in the documented configurations

SHAPES = {
    # SMT, cpu_dedicated_set and cpu_shared_set: isolate is Nova bug #1889633 here
    "smt": {
        "nodes": 2,
        "cores": 4,
        "threads": 2,
        "memory_mib": 8192,
        "pages": {"2048": 1024, "1048576": 2},
        "cpu_dedicated_set": "2-7,10-15",
        "cpu_shared_set": "0,1,8,9",
    },
    # SMT with each dedicated core's sibling left to the host: Nova takes each dedicated thread
    # as a whole core (the operator's way to emulate a host without SMT)
    "smt-siblings-reserved": {
        "nodes": 2,
        "cores": 4,
        "threads": 2,
        "memory_mib": 8192,
        "pages": {"2048": 1024, "1048576": 2},
        "cpu_dedicated_set": "2,4,6,10,12,14",
        "cpu_shared_set": "0,8",
    },
    # no SMT
    "flat": {
        "nodes": 2,
        "cores": 6,
        "threads": 1,
        "memory_mib": 8192,
        "pages": {"2048": 1536, "1048576": 1},
        "cpu_dedicated_set": "1-5,7-11",
        "cpu_shared_set": "0,6",
    },
}

FLAVORS = [
    {"name": "pinned-2m", "vcpus": 2, "ram": 1024, "extra_specs": {"hw:mem_page_size": "2MB"}},
    {"name": "isolate", "vcpus": 2, "ram": 512, "extra_specs": {"hw:cpu_thread_policy": "isolate"}},
    {"name": "pinned-1g-2n", "vcpus": 2, "ram": 2048, "extra_specs": {"hw:numa_nodes": "2"}},
    {"name": "require", "vcpus": 2, "ram": 512, "extra_specs": {"hw:cpu_thread_policy": "require"}},
    {"name": "shared-2m", "vcpus": 2, "ram": 1024, "extra_specs": {"hw:mem_page_size": "2MB"}},
    {"name": "shared", "vcpus": 1, "ram": 512, "extra_specs": {}},
]
for _flavor in FLAVORS:
    if not _flavor["name"].startswith("shared"):
        _flavor["extra_specs"]["hw:cpu_policy"] = "dedicated"
    else:
        _flavor["extra_specs"]["hw:numa_nodes"] = "1"
FLAVORS[2]["extra_specs"]["hw:mem_page_size"] = "1GB"

CONFIGURATIONS = {
    "documented": {"filters": list(DOCUMENTED_FILTERS), "weigher": True},
    "without NUMATopologyFilter": {"filters": ["NfvplaceFilter"], "weigher": True},
}


def loop_plan(configuration: str, boots: int = 24, hosts_per_shape: int = 1) -> dict[str, Any]:
    """Fill (more boots than room), delete every other server, refill, delete all; a snapshot
    after each phase."""
    hosts = [
        {"name": f"{shape}-{k}", **spec}
        for shape, spec in SHAPES.items()
        for k in range(hosts_per_shape)
    ]
    steps: list[dict[str, Any]] = []
    names = [f"vm{k}" for k in range(boots)]
    steps += [{"boot": FLAVORS[k % len(FLAVORS)], "name": n} for k, n in enumerate(names)]
    steps.append({"snapshot": "filled"})
    steps += [{"delete": n} for n in names[::2]]
    steps.append({"snapshot": "half deleted"})
    again = [f"again{k}" for k in range(boots // 2)]
    steps += [{"boot": FLAVORS[(k + 1) % len(FLAVORS)], "name": n} for k, n in enumerate(again)]
    steps.append({"snapshot": "refilled"})
    steps.append({"delete_all": True})
    steps.append({"snapshot": "emptied"})
    return {**CONFIGURATIONS[configuration], "hosts": hosts, "steps": steps}


FALLBACK = "pinned, allocated VCPU by Nova's fallback query (disable_fallback_pcpu_query=False)"


def inconsistencies(snapshot: dict[str, Any]) -> list[str]:
    """What the compute nodes and Placement hold against the live servers: pinned CPUs and
    hugepages per host cell against the servers' NUMA topologies; each server's allocation
    against its topology (PCPU for pinned vCPUs, VCPU for the others; a pinned server allocated
    VCPU by Nova's fallback query is `FALLBACK`, counted apart by `fallbacks`); Placement's
    usages against the servers' allocations; the instances nova-compute's resource tracker
    counts on the host against the live servers there."""
    problems = []
    for name, host in snapshot["hosts"].items():
        servers = [s for s in snapshot["servers"].values() if s["host"] == name]
        stray = sorted(set(host.get("nova", {}).get("tracked", ())) - {s["id"] for s in servers})
        if stray:
            problems.append(
                f"{name}: the resource tracker counts instances {stray}, not live there"
            )
        pinned: dict[int, set[int]] = {}
        pages: dict[tuple[int, int], int] = {}
        for server in servers:
            cells = (server["numa_topology"] or {}).get("cells") or []
            for cell in cells:
                got = set(cell["cpu_pinning"].values()) | set(cell["cpuset_reserved"])
                pinned.setdefault(cell["id"], set()).update(got)
                if cell["pagesize"] and cell["pagesize"] > 4:
                    key = (cell["id"], cell["pagesize"])
                    pages[key] = pages.get(key, 0) + cell["memory"] * 1024 // cell["pagesize"]
            problems += [f"{name}: {p}" for p in _allocation(server) if p != FALLBACK]
        for cell in host["cells"]:
            if set(cell["pinned_cpus"]) != pinned.get(cell["id"], set()):
                problems.append(
                    f"{name} cell {cell['id']}: pinned {cell['pinned_cpus']}, the servers "
                    f"pin {sorted(pinned.get(cell['id'], ()))}"
                )
            for p in cell["mempages"]:
                want = pages.get((cell["id"], p["size_kb"]), 0)
                if p["size_kb"] > 4 and p["used"] != want:
                    problems.append(
                        f"{name} cell {cell['id']}: {p['used']} pages of {p['size_kb']} KiB "
                        f"used, the servers hold {want}"
                    )
        for rc, used in host["usages"].items():
            want = sum(s["allocations"].get(rc, 0) for s in servers)
            if used != want:
                problems.append(f"{name}: Placement {rc} {used}, the servers' allocations {want}")
    return problems


def _allocation(server: dict[str, Any]) -> list[str]:
    cells = (server["numa_topology"] or {}).get("cells") or []
    dedicated = sum(len(c["pcpuset"]) for c in cells)
    got = server["allocations"]
    if (got.get("PCPU", 0), got.get("VCPU", 0)) == (dedicated, server["vcpus"] - dedicated):
        return [] if got.get("MEMORY_MB") == server["memory_mb"] else ["MEMORY_MB differs"]
    if dedicated and (got.get("PCPU", 0), got.get("VCPU", 0)) == (0, server["vcpus"]):
        return [FALLBACK]
    return [f"allocated {got}, its topology pins {dedicated} of {server['vcpus']} vCPUs"]


def fallbacks(snapshot: dict[str, Any]) -> int:
    return sum(FALLBACK in _allocation(s) for s in snapshot["servers"].values())


def differences(result: dict[str, Any]) -> dict[str, Any]:
    """Verdicts of NfvplaceFilter against NUMATopologyFilter on the same HostStates, each
    disagreement classified by the differential's counterfactuals (bench/nova_classes.py)."""
    from bench import nova_cases, nova_classes, nova_diff

    pairs = sum(len(v["hosts"]) for v in result["verdicts"])
    cases = [
        {"flavor": v["flavor_spec"], "hosts": [view]}
        for v in result["verdicts"]
        for view in v.get("differ") or ()
    ]
    classes: list[dict[str, Any]] = []
    if cases:
        again = {"pci_alias": [nova_cases.PCI_ALIAS], "cases": cases}
        nova, ours = nova_diff.run_nova(again), nova_diff.run_nfvplace(again)
        compared = nova_diff.compare(again, nova, ours)
        classes = nova_classes.classify(
            again, compared, nova_diff.run_nova, nova_diff.run_nfvplace, nova_diff.compare
        )
    return {"pairs": pairs, "differ": len(cases), "classes": classes}
