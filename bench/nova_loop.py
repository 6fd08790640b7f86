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
