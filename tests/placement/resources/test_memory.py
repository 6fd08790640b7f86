"""The memory kind: normal memory and hugepages per node, and its measures for the policies."""

from __future__ import annotations

import pytest
from builders import NodeSpec, cpu_set, host, vm
from constraint_cases import Case, check, two_nodes

from nfvplace.claims import claim
from nfvplace.placement import FleetIndex, place
from nfvplace.placement.resources.memory import MEMORY
from nfvplace.placement.resources.scoring import NodeFullness

MEMORY_CASES = [
    Case("hugepages fit", [host()], vm(cpu_sets=[cpu_set(0, 2, hugepages_1g=8)])),
    Case(
        "hugepages short",
        [host()],
        vm(cpu_sets=[cpu_set(0, 2, hugepages_1g=9)]),
        "hugepages",
        9,
        8,
        summary="1 have no NUMA node with 9 free 1 GiB pages",
    ),
    Case(
        "hugepages used by others",
        [host(nodes=two_nodes(hugepages_1g=8, hugepages_1g_used=6))],
        vm(cpu_sets=[cpu_set(0, 2, hugepages_1g=3)]),
        "hugepages",
        3,
        2,
    ),
    Case(
        "normal memory short",
        [host(nodes=two_nodes(hugepages_1g=8, memory_mib=10240))],
        vm(cpu_sets=[cpu_set(0, 2, memory_mib=4096)]),
        "memory",
        4096,
        2048,
    ),
    Case(
        "memory bandwidth of a node",
        [host(nodes=two_nodes(bandwidth_gbps=50))],
        vm(cpu_sets=[cpu_set(0, 2, memory_bandwidth_gbps=60)]),
        "memory_bandwidth",
        60,
        50,
    ),
    Case(
        "pages and pairs on different nodes",
        [host(nodes=[NodeSpec(cores=4, hugepages_1g=0), NodeSpec(cores=1, hugepages_1g=8)])],
        vm(cpu_sets=[cpu_set(0, 8, hugepages_1g=4)]),
        "numa_combination",
        summary="have no NUMA node with 4 free core pairs and 4 free 1 GiB pages",
    ),
]


CASES = MEMORY_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_memory_cases(case: Case) -> None:
    check(case)


# --- its measures for the policies (resources/scoring.py) ---------------------------------------


def test_fullness_is_free_of_normal_memory_and_does_not_lead() -> None:
    chd = host(nodes=[NodeSpec(memory_mib=32768, hugepages_1g=8), NodeSpec(memory_mib=32768)])
    fleet = FleetIndex([chd])
    table = fleet.table(MEMORY)
    fullness = MEMORY.fullness(table)
    assert not fullness.leads
    assert fullness.part == "free memory"
    assert int(fullness.free[0]) == int(table.normal_free[0])
    assert int(fullness.total[0]) == int(table.normal_capacity[0])
    node = fleet.free(0).of(MEMORY)
    assert MEMORY.node_fullness(node, 0) == NodeFullness(
        node[0].normal_free_mib, node[0].normal_total_mib
    )


def test_a_placed_vm_takes_its_memory_from_the_nodes_share() -> None:
    chd = host()
    before = FleetIndex([chd]).free(0).of(MEMORY)
    result = place([chd], vm(cpu_sets=[cpu_set(0, 2, memory_mib=4096)]))
    assert result.ok
    after = FleetIndex([claim(chd, result.configuration)]).free(0).of(MEMORY)
    node = result.configuration.cpu_sets[0].numa_node
    assert before[node].normal_free_mib - after[node].normal_free_mib == 4096
