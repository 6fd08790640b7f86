"""nfvplace in Nova's own loop (bench/nova_loop.py): Nova's functional harness boots, deletes and
refills servers on fake libvirt NUMA hosts (SMT with cpu_dedicated_set, SMT with each dedicated
core's sibling left to the host, no SMT; 2 MiB and 1 GiB pages; pinned, isolate, require, shared
flavors) with NfvplaceFilter and a real `nfvplace serve`, in the documented configuration and
without NUMATopologyFilter. No boot fails at the compute claim, claims stay consistent after every
phase, and every verdict that differs from NUMATopologyFilter's falls in a documented class."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from bench import nova_classes, nova_loop

pytestmark = pytest.mark.slow

NO_VALID_HOST = "No valid host was found"


@pytest.mark.parametrize("configuration", list(nova_loop.CONFIGURATIONS))
def test_fill_delete_refill_in_novas_loop(configuration: str) -> None:
    result = nova_loop.run_plan(nova_loop.loop_plan(configuration))
    assert result["claims_refused"] == []
    assert result["claims_failed"] == []  # a claim that raised otherwise, with its traceback
    assert not [s for s in result["steps"] if s.get("error")], [
        s for s in result["steps"] if s.get("error")
    ]
    boots = [s for s in result["steps"] if "boot" in s]
    active = [b for b in boots if b["status"] == "ACTIVE"]
    assert all(NO_VALID_HOST in (b["fault"] or "") for b in boots if b["status"] != "ACTIVE")
    assert len(active) >= 24, Counter(b["status"] for b in boots)
    assert len(active) < len(boots)  # the fill went past the room: refusals were exercised
    _every_kind_booted(active)
    snapshots = [s for s in result["steps"] if "snapshot" in s]
    assert [s["snapshot"] for s in snapshots] == ["filled", "half deleted", "refilled", "emptied"]
    for snapshot in snapshots:
        assert nova_loop.inconsistencies(snapshot) == [], snapshot["snapshot"]
    assert snapshots[-1]["servers"] == {}
    differences = nova_loop.differences(result)
    assert differences["pairs"] >= len(boots)
    summary = {
        "boots": len(boots),
        "active": len(active),
        "pairs": differences["pairs"],
        "differ": differences["differ"],
        "classes": Counter(c["class"] for c in differences["classes"]),
        "fallbacks": {s["snapshot"]: nova_loop.fallbacks(s) for s in snapshots},
    }
    print(configuration, summary)
    sides = Counter(nova_classes.SIDE.get(c["class"], c["class"]) for c in differences["classes"])
    assert set(sides) <= {nova_classes.NOVA_WRONG, nova_classes.KEPT}, differences["classes"]


def _every_kind_booted(active: list[dict[str, Any]]) -> None:
    pages = {c["pagesize"] for b in active for c in b["numa_topology"]["cells"]}
    assert {2048, 1048576} <= pages
    isolate = [b for b in active if b["flavor"] == "isolate"]
    assert isolate  # on the host whose dedicated threads have their siblings left to the host
    assert {b["host"] for b in isolate} <= {"smt-siblings-reserved-0", "flat-0"}
    assert any(b["host"] == "smt-siblings-reserved-0" for b in isolate)
    assert {b["host"] for b in active} == {"smt-0", "smt-siblings-reserved-0", "flat-0"}
