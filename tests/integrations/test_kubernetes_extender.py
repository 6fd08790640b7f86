"""The extender's pure parts: reading ExtenderArgs, a node's CHD with assumed pods marked taken, and
which assumed pods a node's new NodeResourceTopology shows."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import nfvplace
from nfvplace.integrations.kubernetes.counts import ASSUMED_OWNER, with_consumption
from nfvplace.integrations.kubernetes.extender import (
    ExtenderInputError,
    Seen,
    now_shown,
    read_args,
)
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.store.assumed import AssumedPod, SeenNode

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "kubernetes"
POD = {"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": []}}


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


def test_assumed_pods_are_marked_taken_on_the_chd() -> None:
    host = nfvplace.load(EXAMPLES / "nrt-worker-1.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    taken = with_consumption(
        host,
        [
            {"cpu": {1: 3}, "hugepages-1Gi": {1: 2 * 2**30}, "memory": {1: 2**30}},
            {"intel.com/intel_sriov_netdevice": {1: 2}},
        ],
    )
    node = taken.numa_nodes[1]
    assert sum(c.owner == ASSUMED_OWNER for c in node.cpus) == 3
    assert node.memory.hugepages[0].used == 2
    assert node.memory.normal.used_mib == 1024
    assert sum(vf.owner == ASSUMED_OWNER for vf in node.ports[0].vfs) == 2
    assert taken.numa_nodes[0] == host.numa_nodes[0]


def _pod(uid: str, cpus: int, node: int = 0) -> AssumedPod:
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    return AssumedPod(uid, uid, {"n": {"cpu": {node: cpus}}}, moment, moment)


@pytest.mark.parametrize(
    ("before", "after", "generation", "shown"),
    [
        (10, 4, 2, {"a", "b"}),  # 6 CPUs gone: a (4) and b (2), oldest first
        (10, 6, 2, {"a"}),  # 4 gone: a only
        (10, 8, 2, {"b"}),  # 2 gone: not a (4), but b (2)
        (10, 4, 1, set()),  # the node did not change since it was seen
        (10, 12, 2, set()),  # more free than before (a pod left): nothing shown
    ],
)
def test_what_a_new_nrt_shows(before: int, after: int, generation: int, shown: set[str]) -> None:
    seen = Seen()
    pods = [_pod("a", 4), _pod("b", 2)]
    now_shown("n", generation, {"cpu": {0: after}}, SeenNode(1, {"cpu": {0: before}}), pods, seen)
    assert seen.shown == shown
    assert ("n" in seen.views) is (generation > 1)
