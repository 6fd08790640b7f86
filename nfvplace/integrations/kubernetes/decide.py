"""The one decision of the Kubernetes door: would this node's kubelet admit this pod, and how good a
node is it, as a pure function of the pod's shape and the node's state.

Filter, prioritize and bind all answer from `decide`: a node filter refuses scores 0, a node it
keeps scores 1 to 10, and bind admits exactly what filter would. Filter and prioritize decide many
nodes at once over columns (`vector.py`, `verdicts.py`): the same function of the same counts,
stated in closed form where it can be, and this one elsewhere. The node's state is its
NodeResourceTopology (read as a CHD, counted by `state.node_state`) less what the pods nfvplace
assumed there take (pods bound there that the object does not show yet). The kubelet's rules are
`admission.admit` (its Topology Manager, CPU, memory and device managers over counts); the score
is the policy measured on the same counts, after the pod's allocation:

- `pack`: the share of the node's allocatable CPUs (and of each NUMA-pinned resource the pod
  takes) in use once the pod is there: the fullest node first, empty nodes kept empty;
- `spread`: the share left free;
- `least-fragmentation`: on the NUMA nodes the pod takes CPUs from, the share of their CPUs in use
  once it is there: the tightest fit first, whole NUMA nodes kept free for large pods.

A decision is cached per (pod shape, node name, node generation, assumptions on the node, policy,
unregistered rule): the same burst of identical pods over an unchanged node costs one admission.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

from ...dialects.kubernetes import Pod
from ...models.chd import TopologyManager
from .admission import admit, container_demand
from .hints import UndecidedError
from .state import Consumption, NodeState, Pool

MAX_SCORE = 10
"""`extenderv1.MaxExtenderPriority`: extenders score 0 to 10; a node that fits scores 1 to 10."""


@dataclass(frozen=True)
class NodeView:
    """A node as nfvplace knows it: its NodeResourceTopology's counts (`reported`), its Topology
    Manager, and what the pods assumed there take. `generation` changes with the object."""

    name: str
    generation: int
    reported: NodeState
    manager: TopologyManager
    assumed: tuple[tuple[str, Consumption], ...] = ()  # (pod uid, what it takes), oldest first

    @property
    def key(self) -> Hashable:
        placed = tuple(
            (u, tuple((r, tuple(p.items())) for r, p in c.items())) for u, c in self.assumed
        )
        return (self.name, self.generation, self.reported.made, placed)  # a pod's NUMA node moves

    def state(self) -> NodeState:
        """The counts with the assumed pods taken."""
        state = self.reported.copy()
        for _uid, consumption in self.assumed:
            state.take(consumption)
        return state


@dataclass(frozen=True)
class NodeDecision:
    """One node's answer for one pod. Refused: `reason` says why with the numbers, and
    `resolvable` when the node would admit the pod on its NodeResourceTopology alone (the refusal
    rests on pods assumed there, which the object will show or which will go)."""

    node: str
    fits: bool
    score: int
    reason: str = ""
    resolvable: bool = False
    consumption: Consumption | None = None


def decide(
    pod: Pod,
    shape: Hashable,
    view: NodeView | None,
    node: str,
    policy: str = "pack",
    pass_unregistered: bool = False,
) -> NodeDecision:
    """The decision for `pod` (whose shape is `shape`) on `node` (`view`, None when no
    NodeResourceTopology is known: refused, or passed unchecked with `pass_unregistered`), cached."""
    key = (shape, view.key if view is not None else node, policy, pass_unregistered)
    found = CACHE.get(key)
    if found is None:
        found = _decide(pod, view, node, policy, pass_unregistered)
        CACHE.put(key, found)
    return found


def _decide(
    pod: Pod, view: NodeView | None, node: str, policy: str, pass_unregistered: bool
) -> NodeDecision:
    if view is None:
        if all(container_demand(pod, c).empty for c in pod.containers):
            return NodeDecision(node, True, 1, "nfvplace: the pod pins nothing the kubelet aligns")
        if pass_unregistered:
            return NodeDecision(
                node, True, 1, "nfvplace: no NodeResourceTopology known: not checked"
            )
        return NodeDecision(
            node,
            False,
            0,
            "nfvplace: no NodeResourceTopology known for this node, so its NUMA alignment cannot "
            "be checked (nfvplace serve --unregistered-nodes pass lets such nodes through)",
        )
    state = view.state()
    try:
        answer = admit(pod, state, view.manager)
        if answer.admit:
            consumption = answer.consumption or {}
            return NodeDecision(
                node, True, score(policy, state, consumption), "", False, consumption
            )
        resolvable = bool(view.assumed) and admit(pod, view.reported, view.manager).admit
    except UndecidedError as exc:
        return NodeDecision(node, True, 1, f"nfvplace: not checked: {exc}")
    if resolvable:
        return NodeDecision(
            node,
            False,
            0,
            f"nfvplace: {answer.reason} (counting {len(view.assumed)} pod(s) bound here that the "
            "node's NodeResourceTopology does not show yet)",
            resolvable=True,
        )
    return NodeDecision(node, False, 0, f"nfvplace: {answer.reason}")


def _share(used: int, total: int) -> float:
    return used / total if total > 0 else 0.0


def score(policy: str, state: NodeState, consumption: Consumption) -> int:
    """1 to 10: the policy measured on `state` once `consumption` is taken (module docstring)."""
    cpus = consumption.get("cpu", {})
    if policy == "least-fragmentation":
        touched = [n for n, amount in cpus.items() if amount] or list(state.cpus)
        total = sum(state.cpus[n].allocatable for n in touched)
        free = sum(state.cpus[n].free for n in touched) - sum(cpus.values())
        measure = _share(total - free, total)
    else:
        shares = [_after(state.cpus, cpus)]
        for resource, per_node in (*state.memory.items(), *state.devices.items()):
            if resource in consumption:
                shares.append(_after(per_node, consumption[resource]))
        used = sum(shares) / len(shares)
        measure = used if policy == "pack" else 1.0 - used
    return 1 + round(measure * (MAX_SCORE - 1))


def _after(pools: dict[int, Pool], taken: dict[int, int]) -> float:
    """The share of a resource in use on the node once `taken` is taken."""
    total = sum(p.allocatable for p in pools.values())
    free = sum(p.free for p in pools.values()) - sum(taken.values())
    return _share(total - free, total)


class DecisionCache:
    """The most recent decisions (least recently used dropped first), shared by a worker's
    threads."""

    def __init__(self, limit: int = 65_536) -> None:
        self.limit = limit
        self._kept: OrderedDict[Hashable, NodeDecision] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> NodeDecision | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: Hashable, decision: NodeDecision) -> None:
        with self._lock:
            self._kept[key] = decision
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)


CACHE = DecisionCache()


def pod_shape(pod: Pod) -> Hashable:
    """What the decision reads of a pod: its QoS class and each container's requests and limits
    (names kept: they are in the reasons)."""
    return (
        pod.qos,
        pod.pod_level_resources,
        tuple(
            (c.name, c.kind, tuple(sorted(c.requests.items())), tuple(sorted(c.limits.items())))
            for c in pod.containers
        ),
    )
