"""The kubelet's hint providers, allocations and scopes over counts. Cases named `kubelet:` are
translated by hand from k8s.io/kubernetes v1.34.2 (`pkg/kubelet/cm/cpumanager/topology_hints_test.go`,
`devicemanager/topology_hints_test.go`, `memorymanager/policy_static_test.go`), their CPU and device
sets written as how many each NUMA node has; the others are scenarios of whole pods."""

from __future__ import annotations

from typing import Any

import pytest

from nfvplace.dialects.k8s_pod import read_pod
from nfvplace.integrations.kubernetes.admission import admit, pod_demand
from nfvplace.integrations.kubernetes.allocate import allocate_devices
from nfvplace.integrations.kubernetes.hints import Hint, NumaInfo, mask_of
from nfvplace.integrations.kubernetes.providers import (
    Reuse,
    cpu_hints,
    devices_provider,
    memory_hints,
)
from nfvplace.integrations.kubernetes.state import NodeState, Pool
from nfvplace.models.chd import TopologyManager

GI = 2**30


def state(
    cpus: dict[int, tuple[int, int]],
    devices: dict[str, dict[int, tuple[int, int]]] | None = None,
    memory: dict[str, dict[int, tuple[int, int]]] | None = None,
) -> NodeState:
    """A node: CPUs per NUMA node (all, free), devices and memory (allocatable, free)."""
    nodes = tuple(sorted(cpus))
    return NodeState(
        numa=NumaInfo(nodes),
        cpu_total={n: c[0] for n, c in cpus.items()},
        cpus={n: Pool(c[0], c[1]) for n, c in cpus.items()},
        memory={r: {n: Pool(*p) for n, p in v.items()} for r, v in (memory or {}).items()},
        devices={r: {n: Pool(*p) for n, p in v.items()} for r, v in (devices or {}).items()},
    )


def hints(*masks: tuple[tuple[int, ...], bool]) -> list[Hint]:
    return [Hint(mask_of(nodes), preferred) for nodes, preferred in masks]


def pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> Any:
    def spec(index: int, c: dict[str, Any], prefix: str) -> dict[str, Any]:
        limits = {"memory": "1G", **{k: str(v) for k, v in c.items() if k != "restartPolicy"}}
        out: dict[str, Any] = {"name": f"{prefix}-{index}", "resources": {"limits": limits}}
        if "restartPolicy" in c:
            out["restartPolicy"] = c["restartPolicy"]
        return out

    data = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pod", "uid": "podUID"},
        "spec": {
            "initContainers": [spec(i, c, "init") for i, c in enumerate(init or [])],
            "containers": [spec(i, c, "app") for i, c in enumerate(containers)],
        },
    }
    return read_pod(data)[0]


ALWAYS = "Always"


@pytest.mark.parametrize(
    ("init", "app", "cpus"),
    [  # kubelet: TestPodGuaranteedCPUs, TestCase04 to TestCase12
        ([{"cpu": 2}], [{"cpu": 2}], 2),
        ([{"cpu": 5}], [{"cpu": 5}], 5),
        ([{"cpu": 2}], [{"cpu": 5}], 5),
        ([{"cpu": 5}], [{"cpu": 2}], 5),
        ([{"cpu": 2}, {"cpu": 4}], [{"cpu": 2}, {"cpu": 4}], 6),
        ([{"cpu": 1, "restartPolicy": ALWAYS}], [{"cpu": 1}], 2),
        (
            [{"cpu": 5}] + [{"cpu": n, "restartPolicy": ALWAYS} for n in (1, 2, 3)],
            [{"cpu": 1}],
            7,
        ),
        (
            [
                {"cpu": 5},
                {"cpu": 1, "restartPolicy": ALWAYS},
                {"cpu": 2, "restartPolicy": ALWAYS},
                {"cpu": 5},
                {"cpu": 3, "restartPolicy": ALWAYS},
            ],
            [{"cpu": 1}],
            8,
        ),
        ([{"cpu": 10, "restartPolicy": ALWAYS}, {"cpu": 200}], [{"cpu": 100}], 210),
        ([{"cpu": 0}], [{"cpu": 2}], 0),  # TestCase02: no CPU limit on one container, Burstable
        ([{"cpu": 2}], [{"cpu": 0}], 0),  # TestCase03
    ],
)
def test_pod_guaranteed_cpus(init: list[Any], app: list[Any], cpus: int) -> None:
    assert pod_demand(pod(app, init)).cpus == cpus


# kubelet: cpumanager TestGetTopologyHints; two NUMA nodes of 6 CPUs
@pytest.mark.parametrize(
    ("want", "free", "expected"),
    [
        (2, (4, 6), hints(((0,), True), ((1,), True), ((0, 1), False))),
        (5, (4, 6), hints(((1,), True), ((0, 1), False))),
        (7, (4, 6), hints(((0, 1), True))),
        (11, (4, 6), []),
        (2, (1, 1), hints(((0, 1), False))),
        (5, (2, 2), []),
    ],
)
def test_cpu_hints(want: int, free: tuple[int, int], expected: list[Hint]) -> None:
    node = state({0: (6, free[0]), 1: (6, free[1])})
    assert cpu_hints(node, want, {}) == expected


def test_cpu_hints_keep_to_the_nodes_of_reusable_cpus() -> None:
    node = state({0: (6, 2), 1: (6, 6)})
    assert cpu_hints(node, 4, {0: 2}) == hints(((0,), True), ((0, 1), False))


# kubelet: devicemanager getCommonTestCases (two NUMA nodes)
@pytest.mark.parametrize(
    ("case", "devices", "requests", "expected"),
    [
        (
            "Single Request, one device per socket",
            {"testdevice": {0: (1, 1), 1: (1, 1)}},
            {"testdevice": 1},
            {"testdevice": hints(((0,), True), ((1,), True), ((0, 1), False))},
        ),
        (
            "Request for 2, one device per socket",
            {"testdevice": {0: (1, 1), 1: (1, 1)}},
            {"testdevice": 2},
            {"testdevice": hints(((0, 1), True))},
        ),
        (
            "Request for 2, 2 devices per socket",
            {"testdevice": {0: (2, 2), 1: (2, 2)}},
            {"testdevice": 2},
            {"testdevice": hints(((0,), True), ((1,), True), ((0, 1), False))},
        ),
        (
            "Request for 2, optimal on 1 NUMA node, forced cross-NUMA",
            {"testdevice": {0: (2, 1), 1: (2, 1)}},
            {"testdevice": 2},
            {"testdevice": hints(((0, 1), False))},
        ),
        (
            "2 device types, mixed configuration",
            {"testdevice1": {0: (2, 2), 1: (2, 2)}, "testdevice2": {0: (1, 1)}},
            {"testdevice1": 2, "testdevice2": 1},
            {
                "testdevice1": hints(((0,), True), ((1,), True), ((0, 1), False)),
                "testdevice2": hints(((0,), True), ((0, 1), False)),
            },
        ),
        (
            "Single device type, more requested than available",
            {"testdevice": {0: (2, 2), 1: (2, 2)}},
            {"testdevice": 6},
            {"testdevice": []},
        ),
        ("Single Request, no alignment", {}, {"testdevice": 1}, {"testdevice": None}),
    ],
)
def test_device_hints(case: str, devices: Any, requests: Any, expected: Any) -> None:
    node = state({0: (1, 1), 1: (1, 1)}, devices)
    assert devices_provider(node, requests, None) == expected, case


# kubelet: devicemanager TestTopologyAlignedAllocation (devices with topology)
@pytest.mark.parametrize(
    ("case", "per_node", "want", "hint", "expected"),
    [
        ("Single Request, socket 0", {0: 1, 1: 1}, 1, (0,), {0: 1}),
        ("Single Request, socket 1", {0: 1, 1: 1}, 1, (1,), {1: 1}),
        ("Request for 2, socket 0", {0: 2, 1: 2}, 2, (0,), {0: 2}),
        ("Request for 2, socket 1", {0: 2, 1: 2}, 2, (1,), {1: 2}),
        ("Request for 4, unsatisfiable, prefer socket 0", {0: 3, 1: 3}, 4, (0,), {0: 3, 1: 1}),
        ("Request for 4, unsatisfiable, prefer socket 1", {0: 3, 1: 3}, 4, (1,), {0: 1, 1: 3}),
        ("Request for 4, multisocket", dict.fromkeys(range(4), 2), 4, (1, 3), {1: 2, 3: 2}),
    ],
)
def test_topology_aligned_allocation(
    case: str, per_node: dict[int, int], want: int, hint: tuple[int, ...], expected: Any
) -> None:
    node = state(
        dict.fromkeys(per_node, (1, 1)), {"resource": {n: (c, c) for n, c in per_node.items()}}
    )
    taken = allocate_devices(node, "resource", want, Hint(mask_of(hint), True), Reuse(), False)
    assert taken == expected, case


def test_memory_hints_keep_away_from_nodes_given_with_another_group() -> None:
    # kubelet: TestStaticPolicyGetTopologyHints, "should calculate new topology hints, when the
    # container does not exist under assignments": nodes 0 and 1 hold a two-node assignment
    mb = 2**20
    node = state(
        dict.fromkeys(range(4), (2, 2)),
        memory={
            "memory": {
                0: (1536 * mb, 0),
                1: (1536 * mb, GI),
                2: (1536 * mb, 1536 * mb),
                3: (1536 * mb, 1536 * mb),
            },
            "hugepages-1Gi": {0: (GI, 0), 1: (GI, 0), 2: (GI, GI), 3: (GI, GI)},
        },
    )
    node.memory_groups.update({0: mask_of((0, 1)), 1: mask_of((0, 1))})
    expected = hints(((2,), True), ((3,), True), ((2, 3), False))
    assert memory_hints(node, {"memory": GI, "hugepages-1Gi": GI}, None) == {
        "memory": expected,
        "hugepages-1Gi": expected,
    }


# --- whole pods --------------------------------------------------------------------------

SNN = TopologyManager(policy="single-numa-node", scope="container")


def test_container_scope_is_greedy_as_the_kubelet() -> None:
    """Containers in order, each on the lowest-numbered node that fits: `a` (2 CPUs) lands on
    node 0, and then `b` (4 CPUs) fits on no single node, although a joint choice would fit."""
    two = pod([{"cpu": 2}, {"cpu": 4}])
    node = state({0: (4, 4), 1: (4, 2)})
    answer = admit(two, node, SNN)
    assert not answer.admit
    assert "Topology Affinity Error" in answer.reason
    assert "'app-1' (4 CPUs)" in answer.reason
    assert "NUMA node 0: 2 CPUs; NUMA node 1: 2 CPUs" in answer.reason
    pod_scope = admit(two, node, TopologyManager(policy="single-numa-node", scope="pod"))
    assert not pod_scope.admit  # 6 CPUs on one node: neither has them
    reversed_pod = admit(pod([{"cpu": 4}, {"cpu": 2}]), node, SNN)
    assert reversed_pod.admit
    assert reversed_pod.affinity == (("app-0", (0,)), ("app-1", (1,)))
    assert reversed_pod.consumption == {"cpu": {0: 4, 1: 2}}


@pytest.mark.parametrize(
    ("policy", "scope", "admitted", "consumption"),
    [
        ("single-numa-node", "container", False, None),
        ("restricted", "container", True, {"cpu": {0: 4, 1: 2}}),  # 6 > 4: two nodes preferred
        ("best-effort", "container", True, {"cpu": {0: 4, 1: 2}}),
        ("none", "container", True, {"cpu": {0: 4, 1: 2}}),
        ("single-numa-node", "pod", False, None),
    ],
)
def test_a_container_larger_than_a_node(
    policy: str, scope: str, admitted: bool, consumption: Any
) -> None:
    node = state({0: (4, 4), 1: (4, 4)})
    answer = admit(pod([{"cpu": 6}]), node, TopologyManager(policy=policy, scope=scope))
    assert answer.admit is admitted
    assert answer.consumption == consumption


def test_restricted_refuses_a_spread_that_is_not_the_narrowest() -> None:
    """4 CPUs fit one node of 4, but only 2 are free on each: the only hint spans both nodes and
    is not preferred; restricted refuses, best-effort takes it."""
    node = state({0: (4, 2), 1: (4, 2)})
    assert not admit(pod([{"cpu": 4}]), node, TopologyManager(policy="restricted")).admit
    assert admit(pod([{"cpu": 4}]), node, TopologyManager(policy="best-effort")).admit


def test_policy_none_still_fails_when_too_few_exclusive_cpus_are_free() -> None:
    answer = admit(pod([{"cpu": 8}]), state({0: (4, 4), 1: (4, 2)}), TopologyManager())
    assert not answer.admit
    assert "requested=8, available=6" in answer.reason


def test_devices_and_cpus_align_on_one_node() -> None:
    node = state(
        {0: (8, 8), 1: (8, 8)},
        devices={"intel.com/sriov": {0: (4, 0), 1: (4, 4)}},
    )
    answer = admit(pod([{"cpu": 4, "intel.com/sriov": 2}]), node, SNN)
    assert answer.admit
    assert answer.consumption == {"cpu": {1: 4}, "intel.com/sriov": {1: 2}}


def test_burstable_pod_aligns_only_its_devices() -> None:
    node = state({0: (8, 8), 1: (8, 8)}, devices={"vendor/dev": {0: (1, 0), 1: (1, 1)}})
    burstable = read_pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "b"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "resources": {
                            "requests": {"cpu": "1", "vendor/dev": "1"},
                            "limits": {"vendor/dev": "1"},
                        },
                    }
                ]
            },
        }
    )[0]
    answer = admit(burstable, node, SNN)
    assert answer.admit
    assert answer.consumption == {"vendor/dev": {1: 1}}


def test_init_container_cpus_are_reused_by_the_app_container() -> None:
    node = state({0: (4, 4), 1: (4, 4)})
    answer = admit(pod([{"cpu": 3}], [{"cpu": 2}]), node, SNN)
    assert answer.admit
    assert answer.affinity == (("init-0", (0,)), ("app-0", (0,)))
    assert answer.consumption == {"cpu": {0: 3}}  # the init container's 2, reused, and 1 more


def test_memory_and_hugepages_align_with_the_cpus() -> None:
    node = state(
        {0: (8, 8), 1: (8, 8)},
        memory={
            "memory": {0: (8 * GI, 8 * GI), 1: (8 * GI, 8 * GI)},
            "hugepages-1Gi": {0: (4 * GI, GI), 1: (4 * GI, 4 * GI)},
        },
    )
    answer = admit(pod([{"cpu": 2, "memory": "2Gi", "hugepages-1Gi": "2Gi"}]), node, SNN)
    assert answer.admit
    assert answer.consumption == {
        "cpu": {1: 2},
        "memory": {1: 2 * GI},
        "hugepages-1Gi": {1: 2 * GI},
    }
    too_much = admit(pod([{"cpu": 2, "memory": "2Gi", "hugepages-1Gi": "5Gi"}]), node, SNN)
    assert not too_much.admit
    assert "5 GiB hugepages-1Gi" in too_much.reason


def test_what_nfvplace_does_not_decide_is_said() -> None:
    from nfvplace.integrations.kubernetes.hints import BEST_EFFORT, UndecidedError, merge

    many = state(dict.fromkeys(range(17), (2, 2)))
    with pytest.raises(UndecidedError, match="17 NUMA nodes"):
        admit(pod([{"cpu": 1}]), many, SNN)
    hints = [Hint(1 << (n % 8), True) for n in range(1001)]
    with pytest.raises(UndecidedError, match="1002001 combinations"):
        merge(BEST_EFFORT, NumaInfo(tuple(range(8))), [{"a": hints}, {"b": hints}])
