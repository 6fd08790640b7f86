"""The vector decision is `decide`, node by node: over random nodes (every Topology Manager policy
and scope, with and without the memory manager, devices, memory in use, odd NUMA numbering) and
random pods, each node the columns decide gets the verdict, score and reason `decide` gives it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nfvplace.dialects.k8s_pod import read_pod
from nfvplace.integrations.kubernetes.columns import NodeTable
from nfvplace.integrations.kubernetes.decide import NodeView, _decide
from nfvplace.integrations.kubernetes.hints import NumaInfo
from nfvplace.integrations.kubernetes.state import NodeState, Pool
from nfvplace.integrations.kubernetes.vector import decide_rows, unit_of
from nfvplace.models.chd import TopologyManager
from tests.service.kube_api import cnf_pod

GI = 2**30
VF = "intel.com/vf"
POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
SCORES = ("pack", "spread", "least-fragmentation")


@st.composite
def pools(draw: Any, most: int, unit: int = 1) -> Pool:
    allocatable = draw(st.integers(0, most))
    return Pool(allocatable * unit, draw(st.integers(0, allocatable)) * unit)


@st.composite
def node_states(draw: Any) -> tuple[NodeState, TopologyManager]:
    count = draw(st.integers(1, 4) | st.just(9))
    ids = list(range(count))
    if count < 9 and draw(st.booleans()):  # NUMA nodes numbered with gaps
        ids = sorted(draw(st.sets(st.integers(0, 6), min_size=count, max_size=count)))
    cpu_total, cpus = {}, {}
    for n in ids:
        total = draw(st.integers(0, 12) if draw(st.integers(0, 20)) == 0 else st.integers(1, 12))
        allocatable = draw(st.integers(0, total))
        cpu_total[n], cpus[n] = total, Pool(allocatable, draw(st.integers(0, allocatable)))
    memory: dict[str, dict[int, Pool]] = {}
    groups: dict[int, int] = {}
    if draw(st.booleans()):  # the Static memory manager
        types = ["memory"] + (["hugepages-1Gi"] if draw(st.booleans()) else [])
        for name in types:
            memory[name] = {n: draw(pools(8, GI)) for n in ids}
        groups = {n: 1 << n for n in ids if draw(st.booleans())}
    devices = {}
    if draw(st.booleans()):
        devices[VF] = {n: draw(pools(4)) for n in ids if draw(st.integers(0, 3))}
    state = NodeState(NumaInfo(tuple(ids)), cpu_total, cpus, memory, devices, groups)
    manager = TopologyManager(
        policy=draw(st.sampled_from(POLICIES)),
        scope=draw(st.sampled_from(("container", "pod"))),
    )
    return state, manager


@st.composite
def containers(draw: Any, name: str) -> dict[str, Any]:
    limits: dict[str, str] = {}
    if draw(st.integers(0, 4)):
        limits["cpu"] = draw(st.sampled_from(["1", "2", "3", "4", "6", "9", "500m"]))
    if draw(st.integers(0, 4)):
        limits["memory"] = f"{draw(st.integers(1, 9))}Gi"
    if draw(st.integers(0, 3)) == 0:
        limits["hugepages-1Gi"] = f"{draw(st.integers(1, 4))}Gi"
    if draw(st.booleans()):
        limits[VF] = str(draw(st.integers(1, 3)))
    spec: dict[str, Any] = {"name": name, "resources": {"limits": limits}}
    if draw(st.integers(0, 5)) == 0 and limits.get("cpu") not in (None, "500m"):
        spec["resources"]["requests"] = {"cpu": "1"}  # Burstable
    return spec


@st.composite
def pods(draw: Any) -> Any:
    apps = [draw(containers(f"app-{i}")) for i in range(draw(st.integers(1, 2)))]
    if len(apps) == 2 and draw(st.booleans()):
        apps[1]["resources"]["limits"] = {}  # a container that asks for nothing
    init = [draw(containers("init-0"))] if draw(st.integers(0, 5)) == 0 else []
    data = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pod", "uid": "pod-uid"},
        "spec": {"containers": apps, "initContainers": init},
    }
    return read_pod(data)[0]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(node_states(), min_size=1, max_size=8),
    pod=pods(),
    policy=st.sampled_from(SCORES),
)
def test_the_columns_decide_as_decide_does(
    nodes: list[tuple[NodeState, TopologyManager]], pod: Any, policy: str
) -> None:
    table = NodeTable(capacity=2)  # grown as rows come
    for k, (state, manager) in enumerate(nodes):
        table.put(f"node-{k}", 1, state, manager)
    rows = np.arange(len(nodes), dtype=np.int64)
    answers = decide_rows(pod, unit_of(pod), table, rows, policy)
    for k, (state, manager) in enumerate(nodes):
        if not answers.decided[k]:
            continue
        expected = _decide(pod, NodeView(f"node-{k}", 1, state, manager), "n", policy, False)
        got = (bool(answers.fits[k]), int(answers.score[k]), answers.reasons[k])
        assert got == (expected.fits, expected.score if expected.fits else 0, expected.reason)


def _node(free: tuple[int, int], policy: str, memory: bool = False) -> tuple[Any, ...]:
    mem = {"memory": {n: Pool(8 * GI, 4 * GI) for n in (0, 1)}} if memory else {}
    state = NodeState(
        NumaInfo((0, 1)),
        {0: 16, 1: 16},
        {0: Pool(16, free[0]), 1: Pool(16, free[1])},
        mem,
        {VF: {0: Pool(4, 2), 1: Pool(4, 0)}},
    )
    return state, TopologyManager(policy=policy, scope="container")


@pytest.mark.parametrize(
    ("policy", "memory", "decided"),
    [
        ("single-numa-node", True, True),
        ("single-numa-node", False, True),
        ("none", False, True),
        ("none", True, False),  # the memory manager's default hint: to `decide`
        ("restricted", False, False),
        ("best-effort", False, False),
    ],
)
def test_what_the_columns_decide(policy: str, memory: bool, decided: bool) -> None:
    """The usual CNF pod (exclusive CPUs, memory, a VF) on the usual policies is decided at
    once; what the columns do not decide is left to `decide`, never guessed."""
    table = NodeTable()
    for k, free in enumerate([(8, 2), (2, 8), (1, 1)]):
        table.put(f"node-{k}", 1, *_node(free, policy, memory))
    pod = read_pod(cnf_pod(4, "u", VF))[0]
    answers = decide_rows(pod, unit_of(pod), table, np.arange(3, dtype=np.int64), "pack")
    assert answers.decided.tolist() == [decided] * 3
    if decided and policy == "single-numa-node":
        assert answers.fits.tolist() == [True, False, False]  # the VF is on NUMA node 0 only
        assert "NUMA node 0: 2 CPUs" in answers.reasons[1] or "NUMA node 0" in answers.reasons[1]
