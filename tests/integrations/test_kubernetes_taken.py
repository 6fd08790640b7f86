"""Nodes with pods assumed on them, decided over the columns with what those pods take taken, are
decided as `decide` decides them, node by node: verdict, score, reason (naming the pods counted)
and whether the refusal is `resolvable`; the shared rows are left as they were."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nfvplace.dialects.k8s_pod import read_pod
from nfvplace.integrations.kubernetes import verdicts as verdicts_module
from nfvplace.integrations.kubernetes.columns import ROW_ARRAYS, NodeTable, Pools
from nfvplace.integrations.kubernetes.decide import NodeView, _decide, pod_shape
from nfvplace.integrations.kubernetes.hints import NumaInfo
from nfvplace.integrations.kubernetes.state import Consumption, NodeState, Pool
from nfvplace.integrations.kubernetes.taken import TakenTable
from nfvplace.integrations.kubernetes.verdicts import Verdicts, _decide_rows, _decide_taken, _Kept
from nfvplace.models.chd import TopologyManager
from tests.integrations.test_kubernetes_vector import GI, SCORES, VF, node_states, pods
from tests.service.kube_api import cnf_pod

UNITS = {"cpu": 1, "memory": GI, "hugepages-1Gi": GI, VF: 1}


@st.composite
def consumptions(draw: Any) -> Consumption:
    out: Consumption = {}
    for resource in draw(st.sets(st.sampled_from(sorted(UNITS)), max_size=4)):
        nodes = draw(st.sets(st.integers(0, 4) | st.just(9), min_size=1, max_size=3))
        low = -1 if draw(st.integers(0, 30)) == 0 else 0  # `take` clamps each pod's: to `decide`
        out[resource] = {n: draw(st.integers(low, 3)) * UNITS[resource] for n in nodes}
    return out


def _assumed(draw: Any, count: int) -> dict[str, tuple[tuple[str, Consumption], ...]]:
    out = {}
    for k in range(count):
        held = draw(st.lists(consumptions(), max_size=4))
        if held or draw(st.booleans()):
            out[f"node-{k}"] = tuple((f"pod-{k}-{j}", c) for j, c in enumerate(held))
    return out


def _columns(table: NodeTable) -> list[Any]:
    kinds = [table.cpu, *table.memory.values(), *table.devices.values()]
    return [table.memory_used.copy(), table.exact.copy(), *(p.free.copy() for p in kinds)]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(node_states(), min_size=1, max_size=8),
    pod=pods(),
    policy=st.sampled_from(SCORES),
    data=st.data(),
)
def test_nodes_with_assumed_pods_are_decided_as_decide_does(
    nodes: list[tuple[NodeState, TopologyManager]], pod: Any, policy: str, data: Any
) -> None:
    _compare(nodes, pod, policy, data)


@st.composite
def cnf_nodes(draw: Any) -> tuple[NodeState, TopologyManager]:
    """The burst's nodes: two NUMA nodes, CPUs, memory of the memory manager, VFs."""
    free = [draw(st.integers(0, 16)) for _ in (0, 1)]
    state = NodeState(
        NumaInfo((0, 1)),
        {0: 16, 1: 16},
        {n: Pool(16, free[n]) for n in (0, 1)},
        {"memory": {n: Pool(8 * GI, draw(st.integers(0, 8)) * GI) for n in (0, 1)}},
        {VF: {n: Pool(4, draw(st.integers(0, 4))) for n in (0, 1)}},
    )
    policy = draw(st.sampled_from(("single-numa-node", "none")))
    return state, TopologyManager(policy=policy, scope=draw(st.sampled_from(("container", "pod"))))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(cnf_nodes(), min_size=1, max_size=8),
    cpus=st.integers(1, 8),
    policy=st.sampled_from(SCORES),
    data=st.data(),
)
def test_a_burst_on_nodes_with_assumed_pods_is_decided_as_decide_does(
    nodes: list[tuple[NodeState, TopologyManager]], cpus: int, policy: str, data: Any
) -> None:
    _compare(nodes, read_pod(cnf_pod(cpus, "u", VF))[0], policy, data)


def _compare(
    nodes: list[tuple[NodeState, TopologyManager]], pod: Any, policy: str, data: Any
) -> None:
    table = NodeTable(capacity=2)
    for k, (state, manager) in enumerate(nodes):
        table.put(f"node-{k}", 1, state, manager)
    assumed = _assumed(data.draw, len(nodes))
    names = [f"node-{k}" for k in range(len(nodes))]
    rows = np.arange(len(nodes), dtype=np.int64)
    shape = pod_shape(pod)
    kept = _Kept.sized(table.capacity)
    _decide_rows(pod, shape, table, kept, rows, policy)
    before = _columns(table)
    at = [k for k, name in enumerate(names) if name in assumed]
    n = len(names)
    out = Verdicts(names, np.zeros(n, bool), np.zeros(n, np.int64), [""] * n, np.zeros(n, bool))
    views = _decide_taken(pod, table, kept, names, rows, at, assumed, policy, out)
    for a, b in zip(before, _columns(table), strict=True):
        assert np.array_equal(a, b)  # the shared rows are not written
    for k in at:
        state, manager = nodes[k]
        view = NodeView(names[k], 1, state, manager, assumed[names[k]])
        if k in views:
            assert views[k] == view
            continue
        d = _decide(pod, view, names[k], policy, False)
        got = (bool(out.fits[k]), int(out.score[k]), out.reasons[k], bool(out.resolvable[k]))
        assert got == (d.fits, d.score if d.fits else 0, d.reason, d.resolvable)


def _cnf_node() -> tuple[NodeState, TopologyManager]:
    state = NodeState(
        NumaInfo((0, 1)),
        {0: 16, 1: 16},
        {0: Pool(16, 8), 1: Pool(16, 2)},
        {"memory": {n: Pool(8 * GI, 8 * GI) for n in (0, 1)}},
        {VF: {0: Pool(4, 4), 1: Pool(4, 4)}},
    )
    return state, TopologyManager(policy="single-numa-node", scope="container")


def test_the_usual_burst_is_decided_over_the_columns(monkeypatch: Any) -> None:
    """A CNF pod on nodes carrying one like it: decided at once; a node its assumed pods fill is
    refused with the pods counted named, and `resolvable`."""
    monkeypatch.setattr(verdicts_module, "SCALAR", False)
    table = NodeTable()
    for k in range(3):
        table.put(f"node-{k}", 1, *_cnf_node())
    pod = read_pod(cnf_pod(4, "u", VF))[0]
    held: Consumption = {"cpu": {0: 4}, "memory": {0: GI}, VF: {0: 1}}
    assumed = {"node-0": (("a", held),), "node-1": (("a", held), ("b", held))}
    names = ["node-0", "node-1", "node-2"]
    rows = np.arange(3, dtype=np.int64)
    kept = _Kept.sized(table.capacity)
    _decide_rows(pod, pod_shape(pod), table, kept, rows, "pack")
    out = Verdicts(names, np.zeros(3, bool), np.zeros(3, np.int64), [""] * 3, np.zeros(3, bool))
    views = _decide_taken(pod, table, kept, names, rows, [0, 1], assumed, "pack", out)
    assert views == {}
    assert out.fits.tolist()[:2] == [True, False]
    assert out.resolvable.tolist()[:2] == [False, True]
    assert out.reasons[1].endswith(
        "(counting 2 pod(s) bound here that the node's NodeResourceTopology does not show yet)"
    )
    taken = TakenTable(table, rows[:2], [assumed["node-0"], assumed["node-1"]])
    assert taken.cpu.free[:, :2].tolist() == [[4, 2], [0, 2]]
    assert table.cpu.free[:3, :2].tolist() == [[8, 2]] * 3


def test_row_arrays_name_every_per_row_array_of_the_table() -> None:
    """A `TakenTable` and a grown table copy the arrays `ROW_ARRAYS` names: an array added to
    `NodeTable` and not named there would be left at the wrong size in both."""
    table = NodeTable(capacity=4)
    per_row = {
        name
        for name, value in vars(table).items()
        if isinstance(value, np.ndarray) and len(value) == table.capacity
    }
    assert per_row == set(ROW_ARRAYS)
    assert {n for n, v in vars(table).items() if isinstance(v, Pools)} == {"cpu"}
