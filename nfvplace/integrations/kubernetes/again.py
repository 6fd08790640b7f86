"""An assumed pod's NUMA node is a prediction: placed again on each new object, by the kubelet's
rule.

nfvplace decides a pod's NUMA node on the counts it has when it binds it. When pods left the node
after those counts were read, the kubelet admits the pod on the NUMA node that holds it then: the
lowest one, possibly one that was full when nfvplace decided (kube-scheduler's loop, "churn
spread" with the exporter 2 s late: a 3-CPU pod decided for NUMA node 1 admitted on node 0, and
the next 7-CPU pod refused by its kubelet). So on each new object whose pod fingerprint tells
which pods its counts were read with (`AssumedPods.reconcile`), the assumed pods it does not show
are placed again on its counts, oldest first (the order their Bindings landed, the order the
kubelet admits them), by the Topology Manager's `single-numa-node` rule: each pod whose
consumption sits on one NUMA node goes to the lowest NUMA node that holds all of it, and what it
takes is taken before the next. A pod spread over NUMA nodes, or a node with another policy,
keeps its prediction. An object that matched no pod set when read (the pod watch behind it) is
matched again when the watch catches up (`AssumedPods.rematch`): its pods are placed again then,
on its counts (`placed_again`).
"""

from __future__ import annotations

from ...models.chd import TopologyManager
from ...store import Store
from ...store.assumed import AssumedPod, Counts
from ...store.assumed_rows import Place
from .state import COUNTED, NodeState


def lowest(state: NodeState, needs: dict[str, int]) -> int | None:
    """The lowest NUMA node whose free counts hold all of `needs` (resource -> amount; a
    resource the node does not count per NUMA node is not checked), None when none does."""
    pools = {r: state.free_of(r) for r in needs}
    for node in state.numa.nodes:
        if all(not pools[r] or pools[r].get(node, 0) >= a for r, a in needs.items()):
            return node
    return None


def kubelet_order(state: NodeState, manager: TopologyManager) -> Place:
    """`Shows.place` for a node whose new object counts `state`: the pods it does not show
    (oldest first), placed again (module docstring); the new counts of those that move."""

    def place(pending: list[AssumedPod]) -> dict[str, Counts]:
        if str(manager.policy) != "single-numa-node":
            return {}
        free, moved = state.copy(), dict[str, Counts]()
        for pod in pending:
            held = {r: {n: a for n, a in per.items() if a} for r, per in pod.consumption.items()}
            numa = {n for per in held.values() for n in per}
            counts = pod.consumption
            if len(numa) == 1:
                needs = {r: sum(per.values()) for r, per in held.items() if per}
                to = lowest(free, needs)
                if to is not None and to not in numa:
                    counts = moved[pod.uid] = {r: {to: a} for r, a in needs.items()}
            free.take(counts)
        return moved

    return place


def placed_again(store: Store, node: str) -> tuple[int, Place] | None:
    """The generation of `node`'s stored object and `kubelet_order` on its counts, for
    `AssumedPods.rematch` (None: the node is not stored)."""
    found = store.availability([node]).get(node)
    if found is None:
        return None
    generation, host = found
    return generation, kubelet_order(*COUNTED.of(node, host))
