"""The impact kind (clause 8.2.2.5 impact limits): instances per host, memory-bandwidth budget."""

from __future__ import annotations

import pytest
from builders import host, vm
from constraint_cases import Case, check, two_nodes

from nfvplace.placement import FleetIndex
from nfvplace.placement.resources.impact import ImpactTable

IMPACT = [
    Case(
        "max instances per host",
        [host(instances=({"id": "a-1", "vm": "vm"}, {"id": "a-2", "vm": "vm"}))],
        vm(impact={"max_instances_per_host": 2}),
        "max_instances",
        2,
        2,
    ),
    Case(
        "memory-bandwidth budget",
        [
            host(
                nodes=two_nodes(bandwidth_gbps=50),
                instances=({"id": "a-1", "vm": "x", "memory_bandwidth_gbps": 90},),
            )
        ],
        vm(impact={"memory_bandwidth_gbps": 20}),
        "memory_bandwidth_budget",
        20,
        10,
    ),
    Case(
        "memory-bandwidth budget fits",
        [host(nodes=two_nodes(bandwidth_gbps=50))],
        vm(impact={"memory_bandwidth_gbps": 20}),
    ),
]

CASES = IMPACT


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_impact_cases(case: Case) -> None:
    check(case)


def test_a_name_no_host_runs_is_forgotten() -> None:
    """The index keeps instance counts per VM name; released names leave nothing behind."""
    running = host(instances=({"id": "a-1", "vm": "gone"}, {"id": "b-1", "vm": "kept"}))
    index = FleetIndex([running])
    table = index.tables["impact"]
    assert isinstance(table, ImpactTable)
    assert set(table.instances) == {"gone", "kept"}
    index.update(running.model_copy(update={"instances": running.instances[1:]}))
    assert index.tables["impact"] is table  # the row refilled, not the index rebuilt
    assert set(table.instances) == {"kept"}
    assert table.vm_names == {0: {"kept"}}
    assert table.count("kept", 1).tolist() == [1]
