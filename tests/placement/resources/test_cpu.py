"""The pinned-CPU kind: cores, SMT pairs, thread policies, cpu-sets on nodes, and its measures
for the policies."""

from __future__ import annotations

import pytest
from builders import NodeSpec, cpu_set, host, vm
from constraint_cases import Case, check

from nfvplace.placement import FleetIndex
from nfvplace.placement.request import build_request
from nfvplace.placement.resources.cpu import CPU
from nfvplace.placement.resources.scoring import KEEP_SMT, NodeFullness

PINNED = [
    Case("pairs fit", [host()], vm(cpu_sets=[cpu_set(0, 8)])),
    Case(
        "too many pairs",
        [host()],
        vm(cpu_sets=[cpu_set(0, 10)]),
        "core_pairs",
        5,
        4,
        summary="1 have no NUMA node with 5 free core pairs",
    ),
    Case(
        "pairs on a host without SMT",
        [host(smt=False)],
        vm(cpu_sets=[cpu_set(0, 2)]),
        "smt",
        summary="have no SMT",
    ),
    Case(
        "isolate singles take whole cores",
        [host()],
        vm(cpu_sets=[cpu_set(0, 5, pairs=False)]),
        "cores",
        5,
        4,
    ),
    Case(
        "prefer singles share cores",
        [host()],
        vm(cpu_sets=[cpu_set(0, 8, pairs=False, thread_policy="prefer")]),
    ),
    Case(
        "prefer singles beyond the threads",
        [host()],
        vm(cpu_sets=[cpu_set(0, 9, pairs=False, thread_policy="prefer")]),
        "threads",
        9,
        8,
    ),
    Case(
        "require pairs singles up",
        [host()],
        vm(cpu_sets=[cpu_set(0, 8, pairs=False)], cpu_thread_policy="require"),
    ),
    Case(
        "require on a host without SMT",
        [host(smt=False)],
        vm(cpu_sets=[cpu_set(0, 2, pairs=False)], cpu_thread_policy="require"),
        "smt",
    ),
    Case(
        "isolated vCPU next to a host-reserved sibling",
        # cores 0..3 on node 0; threads 8..11 are host-reserved: 4 isolated half cores remain
        [host(nodes=[NodeSpec(cores=4), NodeSpec(cores=0)], ineligible=(8, 9, 10, 11), smt=True)],
        vm(cpu_sets=[cpu_set(0, 4, pairs=False)]),
        node=0,
    ),
    Case(
        "isolated vCPU never next to another VM",
        [host(nodes=[NodeSpec(cores=2), NodeSpec(cores=0)], used={2: "x", 3: "x"})],
        vm(cpu_sets=[cpu_set(0, 1, pairs=False)]),
        "cores",
        1,
        0,
    ),
    Case(
        "emulator thread needs one more PU",
        [host(nodes=[NodeSpec(cores=2), NodeSpec(cores=0)])],
        vm(cpu_sets=[cpu_set(0, 4)], emulator_threads="isolate"),
        "threads",
        1,
        0,
    ),
    Case(
        "emulator thread fits",
        [host(nodes=[NodeSpec(cores=3), NodeSpec(cores=0)])],
        vm(cpu_sets=[cpu_set(0, 4)], emulator_threads="isolate"),
    ),
]

NODES = [
    Case(
        "two cpu-sets on distinct nodes",
        [host()],
        vm(cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)]),
    ),
    Case(
        "two cpu-sets, one node",
        [host(nodes=[NodeSpec(cores=8), NodeSpec(cores=0)])],
        vm(cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)]),
        "numa_nodes",
        2,
        1,
    ),
    Case(
        "two cpu-sets may share a node",
        [host(nodes=[NodeSpec(cores=8), NodeSpec(cores=0)])],
        vm(cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)], cpu_sets_may_share_node=True),
    ),
    Case(
        "shared node: together they do not fit",
        [host(nodes=[NodeSpec(cores=3), NodeSpec(cores=0)])],
        vm(cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)], cpu_sets_may_share_node=True),
        "infeasible",
        summary="1 fail the exact check on free cores of the nodes shared",
    ),
]

CASES = PINNED + NODES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cpu_cases(case: Case) -> None:
    check(case)


# --- its measures for the policies (resources/scoring.py) ---------------------------------------


def test_fullness_leads_with_free_of_eligible_threads() -> None:
    fleet = FleetIndex([host(used={0: "other"}, ineligible=(15,))])  # 16 threads, 2 nodes
    fullness = CPU.fullness(fleet.table(CPU))
    assert fullness.leads
    assert (int(fullness.free[0]), int(fullness.total[0])) == (14, 15)


def test_room_counts_whole_cores_twice_and_each_half_core_once() -> None:
    # node 0: PU 0 used, its sibling 8 free (a half-busy core); node 1: four whole cores
    fleet = FleetIndex([host(used={0: "other"})])
    assert CPU.room(fleet.table(CPU))[0].tolist() == [3 * 2 + 1, 4 * 2]


@pytest.mark.parametrize(
    ("pairs", "kept"), [(True, None), (False, (KEEP_SMT, True))], ids=["pairs", "no pairs"]
)
def test_smt_is_kept_for_vms_with_pairs(pairs: bool, kept: tuple[int, bool] | None) -> None:
    fleet = FleetIndex([host()])
    request = build_request(vm(cpu_sets=[cpu_set(0, 2, pairs=pairs)]))
    got = CPU.kept(fleet.table(CPU), request)
    assert (got and (got.weight, bool(got.count[0]))) == kept


def test_node_fullness_is_free_of_eligible_threads_on_the_node() -> None:
    fleet = FleetIndex([host(used={0: "other", 1: "other"})])
    free = fleet.free(0).of(CPU)
    assert CPU.node_fullness(free, 0) == NodeFullness(6, 8, leads=True)
    assert CPU.node_fullness(free, 1) == NodeFullness(8, 8, leads=True)
