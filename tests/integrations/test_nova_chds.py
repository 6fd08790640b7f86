"""The scheduler plug-in keeps each host's CHD by what Nova holds of it (`nova/chds.py`), inside
real Nova 34 objects against a live `nfvplace serve`: a host Nova changed between two passes, by
`consume_from_request` (a new NUMA topology) or in place (a cell's pinned CPUs), gets the answer
of its new state; an unchanged host is not written again."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, random, sys, warnings
warnings.simplefilter("ignore")
from nova import conf, context, objects
objects.register_all()
from bench.nova_candidates import host
from bench.nova_scheduler_probe import _spec, _states
from nfvplace.integrations.nova import NfvplaceFilter, chds, scheduler

data = json.load(sys.stdin)
conf.CONF.set_override("url", data["url"], group="nfvplace")
conf.CONF.set_override("token_file", data["token_file"], group="nfvplace")
written = []
real = chds._written
chds._written = lambda *a: written.append(a[0]["host"]) or real(*a)
view = host(random.Random(5), "compute-one")
for cell in view["cells"]:  # every dedicated core pinned but one
    free = set(cell["siblings"][-1]) if cell["id"] == 0 else set()
    cell["pinned_cpus"] = sorted(set(cell["pcpuset"]) - free)
    for page in cell["mempages"]:
        page["used"] = 0
others = [host(random.Random(k), f"compute-{k}") for k in range(3)]
ctx = context.get_admin_context()
two = {"name": "two", "vcpus": 2, "ram": 1024, "extra_specs": {"hw:cpu_policy": "dedicated"}}
states = _states([view, *others])
ours = NfvplaceFilter()
passes = []
for step in ("first", "consumed", "unpinned in place"):
    spec = _spec(ctx, {"flavor": two})
    passed = [h.host for h in ours.filter_all(states, spec)]
    passes.append({"step": step, "passed": passed, "written": sorted(written)})
    written.clear()
    if step == "first":
        one = states[0]
        one.limits["numa_topology"] = objects.NUMATopologyLimits(
            cpu_allocation_ratio=4.0, ram_allocation_ratio=1.0
        )
        one.consume_from_request(spec)  # the scheduler picked it: its one free core is taken
    else:
        for cell in states[0].numa_topology.cells:
            cell.pinned_cpus = set()
json.dump(passes, sys.stdout)
"""


def test_a_host_nova_changed_gets_the_answer_of_its_new_state(
    nova_python: str, live_service: tuple[str, Path]
) -> None:
    url, token_file = live_service
    done = subprocess.run(
        [nova_python, "-c", SCRIPT],
        input=json.dumps({"url": url, "token_file": str(token_file)}),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    first, consumed, unpinned = json.loads(done.stdout)
    assert "compute-one" in first["passed"]
    assert len(first["written"]) == 4  # every host written once
    assert "compute-one" not in consumed["passed"]  # its last free core went to the VM
    assert consumed["written"] == ["compute-one"]  # the others were kept
    assert "compute-one" in unpinned["passed"]
    assert unpinned["written"] == ["compute-one"]
    assert set(first["passed"]) - {"compute-one"} == set(unpinned["passed"]) - {"compute-one"}


def test_collection_is_paused_while_a_pass_writes_and_left_as_it_was() -> None:
    import gc

    from nfvplace.integrations.nova.chds import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    try:
        with gc_paused():
            raise ValueError("a host Nova could not read")
    except ValueError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # someone else paused it: theirs to resume
    finally:
        gc.enable()
