"""The extender's pure parts: reading ExtenderArgs and ExtenderBindingArgs, the one decision filter
and prioritize share (refused 0, kept 1-10, resolvable only through assumed pods), which answer
sends a pod to the backoff queue, and which assumed pods a node's new totals account for."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from nfvplace.dialects.k8s_pod import read_pod
from nfvplace.integrations.kubernetes.decide import NodeView, decide, pod_shape, score
from nfvplace.integrations.kubernetes.extender import (
    ExtenderInputError,
    filter_result,
    priorities,
    read_args,
    read_binding,
)
from nfvplace.integrations.kubernetes.state import NodeState, Pool
from nfvplace.models.chd import TopologyManager
from nfvplace.store.assumed import AssumedPod, accounted

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "kubernetes"
POD = {"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": []}}
SINGLE = TopologyManager(policy="single-numa-node", scope="container")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (None, "must be a JSON object"),
        ({"Pod": "x"}, "must be a Pod object"),
        ({"Pod": POD}, "needs NodeNames, or Nodes"),
        ({"Pod": POD, "NodeNames": [1]}, "list of node names"),
        ({"Pod": POD, "Nodes": {"items": [{}]}}, "metadata.name"),
        (
            {"Pod": {"spec": {"containers": [{"resources": {"limits": {"cpu": "x"}}}]}}},
            "not a Kubernetes quantity",
        ),
    ],
)
def test_unreadable_args_say_why(body: Any, words: str) -> None:
    with pytest.raises(ExtenderInputError, match=words):
        read_args(body)


def test_node_names_and_node_objects() -> None:
    assert read_args({"Pod": POD, "NodeNames": ["a", "b"]}).node_names == ("a", "b")
    args = read_args({"Pod": POD, "Nodes": {"items": [{"metadata": {"name": "c"}}]}})
    assert (args.node_names, args.node_objects) == (("c",), ({"metadata": {"name": "c"}},))


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ([], "must be a JSON object"),
        ({"PodName": "p", "PodNamespace": "ns", "PodUID": "u"}, "Node must be"),
        ({"PodName": "", "PodNamespace": "ns", "PodUID": "u", "Node": "n"}, "PodName"),
        ({"PodName": "p", "PodNamespace": "ns", "PodUID": 3, "Node": "n"}, "PodUID"),
    ],
)
def test_unreadable_binding_args_say_why(body: Any, words: str) -> None:
    with pytest.raises(ExtenderInputError, match=words):
        read_binding(body)


def test_binding_args_are_read() -> None:
    body = {"PodName": "p", "PodNamespace": "ns", "PodUID": "u-1", "Node": "w"}
    binding = read_binding(body)
    assert (binding.name, binding.namespace, binding.uid, binding.node) == ("p", "ns", "u-1", "w")


def node(free: tuple[int, int], vfs: tuple[int, int] = (2, 2), total: int = 16) -> NodeState:
    from nfvplace.integrations.kubernetes.hints import NumaInfo

    return NodeState(
        numa=NumaInfo((0, 1), None),
        cpu_total={0: total, 1: total},
        cpus={0: Pool(total, free[0]), 1: Pool(total, free[1])},
        memory={},
        devices={"intel.com/vf": {0: Pool(2, vfs[0]), 1: Pool(2, vfs[1])}},
    )


def pod(cpus: int, uid: str = "p") -> Any:
    raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": uid, "namespace": "ns", "uid": uid},
        "spec": {
            "containers": [
                {
                    "name": "dp",
                    "resources": {
                        "limits": {"cpu": str(cpus), "memory": "1Gi", "intel.com/vf": "1"}
                    },
                }
            ]
        },
    }
    return read_pod(raw)[0]


def test_one_decision_refused_zero_kept_one_to_ten() -> None:
    """Filter and prioritize read the same decision: whatever the node, a refusal scores 0 and
    a node kept scores 1-10."""
    six = pod(6)
    for generation, free in enumerate(((16, 16), (6, 0), (5, 5), (0, 0), (16, 2))):
        view = NodeView("one", generation, node(free), SINGLE)  # decisions are kept by generation
        decision = decide(six, pod_shape(six), view, "n")
        fits = max(free) >= 6
        assert decision.fits is fits, free
        assert (1 <= decision.score <= 10) if fits else decision.score == 0
        assert not decision.resolvable
        if not fits:
            assert "Topology Affinity Error" in decision.reason


def test_a_refusal_resting_on_assumed_pods_is_resolvable() -> None:
    six = pod(6)
    taken = {"cpu": {0: 12, 1: 12}}
    view = NodeView("two", 1, node((16, 16)), SINGLE, (("other", taken),))
    decision = decide(six, pod_shape(six), view, "n")
    assert (decision.fits, decision.resolvable) == (False, True)
    assert "counting 1 pod(s) bound here" in decision.reason


def test_unregistered_nodes_are_refused_or_passed_as_configured() -> None:
    six = pod(6)
    refused = decide(six, pod_shape(six), None, "ghost")
    assert (refused.fits, refused.score, refused.resolvable) == (False, 0, False)
    assert "no NodeResourceTopology known" in refused.reason
    assert "--unregistered-nodes pass" in refused.reason
    passed = decide(six, pod_shape(six), None, "ghost", pass_unregistered=True)
    assert (passed.fits, passed.score) == (True, 1)
    assert "not checked" in passed.reason
    plain = read_pod(
        {"apiVersion": "v1", "kind": "Pod", **POD, "spec": {"containers": [{"name": "web"}]}}
    )[0]
    anywhere = decide(plain, pod_shape(plain), None, "ghost")  # it pins nothing: any node
    assert (anywhere.fits, anywhere.score) == (True, 1)


@pytest.mark.parametrize(
    ("policy", "fuller_wins"), [("pack", True), ("spread", False), ("least-fragmentation", True)]
)
def test_policies_order_a_fuller_and_an_emptier_node(policy: str, fuller_wins: bool) -> None:
    four = {"cpu": {0: 4}, "intel.com/vf": {0: 1}}
    fuller, emptier = score(policy, node((8, 16)), four), score(policy, node((16, 16)), four)
    assert (fuller > emptier) is fuller_wins, (fuller, emptier)
    assert all(1 <= s <= 10 for s in (fuller, emptier))


def test_the_answers_follow_the_decisions() -> None:
    """No node fits, some only because of assumed pods: an Error (kube-scheduler's backoff
    queue); a node fits: the others are FailedNodes or FailedAndUnresolvableNodes."""
    from nfvplace.integrations.kubernetes.decide import NodeDecision
    from nfvplace.integrations.kubernetes.verdicts import Verdicts

    def of(*decisions: NodeDecision) -> Verdicts:
        return Verdicts.of(decisions)

    args = read_args({"Pod": POD, "NodeNames": ["a", "b", "c"]})
    waiting = NodeDecision("a", False, 0, "full of assumed pods", resolvable=True)
    never = NodeDecision("b", False, 0, "too small")
    retry = filter_result(args, of(waiting, never, NodeDecision("c", False, 0, "too small")))
    assert retry["Error"].startswith("nfvplace.kubernetes.retry: no node takes the pod now")
    assert "a: full of assumed pods" in retry["Error"]
    assert retry["NodeNames"] is None
    kept = filter_result(args, of(waiting, never, NodeDecision("c", True, 7)))
    assert kept["NodeNames"] == ["c"]
    assert kept["FailedNodes"] == {"a": "full of assumed pods"}
    assert kept["FailedAndUnresolvableNodes"] == {"b": "too small"}
    assert kept["Error"] == ""
    only_never = filter_result(args, of(never))
    assert (only_never["Error"], only_never["NodeNames"]) == ("", [])
    assert priorities(args, of(waiting, never, NodeDecision("c", True, 7))) == [
        {"Host": "a", "Score": 0},
        {"Host": "b", "Score": 0},
        {"Host": "c", "Score": 7},
    ]
    refused = filter_result(args, of(NodeDecision("c", True, 7)), "nfvplace: lint refuses the pod")
    assert refused["FailedAndUnresolvableNodes"] == {"c": "nfvplace: lint refuses the pod"}


def _assumed(uid: str, cpus: int, numa: int = 0) -> AssumedPod:
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    return AssumedPod(uid, uid, "n", {"cpu": {numa: cpus}}, moment, moment)


@pytest.mark.parametrize(
    ("now", "shown", "baseline"),
    [
        (26, ["a", "b"], 26),  # 6 CPUs fewer: a (4) and b (2), oldest first
        (28, ["a"], 28),  # 4 fewer: a only
        (30, [], 32),  # 2 fewer: not a (4), so not b either (in order)
        (32, [], 32),  # nothing changed
        (34, [], 34),  # more free than before (a pod left): the baseline rises with it
    ],
)
def test_what_a_new_nrt_accounts_for_by_totals(now: int, shown: list[str], baseline: int) -> None:
    """By the node's totals, whatever NUMA node the kubelet chose (b was predicted on NUMA 1)."""
    pending = [_assumed("a", 4), _assumed("b", 2, numa=1)]
    found, moved = accounted({"cpu": 32}, {"cpu": now}, pending)
    assert found == shown
    assert moved["cpu"] == baseline
