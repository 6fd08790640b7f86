"""The scheduler extender's answers, as pure functions of the request, the nodes' CHDs and the
assumed pods: `ExtenderArgs` in (`k8s.io/kube-scheduler/extender/v1`, Go field names as JSON keys),
`ExtenderFilterResult` and `HostPriorityList` out.

Filter: each node's kubelet decides (`admission.admit`) on the node as its NodeResourceTopology
says less the pods nfvplace admitted that the object does not show yet. A node that refuses the pod
even without those is in `FailedAndUnresolvableNodes` (it does not fit there, whatever the
scheduler does); a node that refuses it only because of them is in `FailedNodes` (it may fit once
those pods are accounted). Both say why, with the numbers. A node with no NodeResourceTopology
known passes: nfvplace has nothing to say about it.

Prioritize: nfvplace's engine scores the pod on each node (`nfvplace.placement.evaluate`, policy
pack, spread or least-fragmentation), as the kubelet will align it there: one cpu-set per pinned
container at container scope, one for the pod at pod scope, memory and hugepages only where the
memory manager pins them; 0-100 mapped to the extender's 0-10.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...dialects.base import DialectError, as_mapping
from ...dialects.k8s_nrt import VF_POOLS_ANNOTATION, vf_pools
from ...dialects.k8s_pod import vm_of
from ...dialects.kubernetes import Pod, read_pod_spec
from ...models.chd import ComputeHostDescriptor
from ...models.vmd import VmDescriptor
from ...placement import evaluate
from ...store.assumed import AssumedPod, SeenNode
from .admission import Admission, admit
from .counts import with_consumption
from .hints import UndecidedError
from .state import Consumption, NodeState, node_state, topology_manager

MAX_EXTENDER_PRIORITY = 10
"""`extenderv1.MaxExtenderPriority`: extenders score 0 to 10."""


class ExtenderInputError(ValueError):
    """The request is not an `ExtenderArgs` nfvplace can read; the message says why."""


@dataclass(frozen=True)
class ExtenderArgs:
    """`ExtenderArgs`: the pod, the candidate node names, and the Node objects when the scheduler
    sent them (`nodeCacheCapable: false`), which the filter gives back."""

    pod: Pod
    pools: Mapping[str, float] | None
    node_names: tuple[str, ...]
    node_objects: tuple[Mapping[str, Any], ...] | None = None


def read_args(body: Any) -> ExtenderArgs:
    """`ExtenderArgs` from its JSON (`Pod`, `Nodes` or `NodeNames`)."""
    if not isinstance(body, Mapping):
        raise ExtenderInputError(
            "ExtenderArgs must be a JSON object with Pod and NodeNames or Nodes"
        )
    raw_pod = body.get("Pod")
    if not isinstance(raw_pod, Mapping) or not isinstance(raw_pod.get("spec"), Mapping):
        raise ExtenderInputError("ExtenderArgs.Pod must be a Pod object with a spec")
    metadata = as_mapping(raw_pod.get("metadata"))
    try:
        pod = read_pod_spec(metadata, raw_pod["spec"], raw_pod.get("status"), ("Pod", "spec"))
        text = as_mapping(metadata.get("annotations")).get(VF_POOLS_ANNOTATION)
        pools = None if text is None else vf_pools(text, ("Pod", "metadata", "annotations"))
    except DialectError as exc:
        where = "/".join(str(p) for p in exc.path)
        raise ExtenderInputError(f"{where}: {exc}") from exc
    names, objects = _nodes(body)
    return ExtenderArgs(pod, pools, names, objects)


def _nodes(body: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[Mapping[str, Any], ...] | None]:
    if body.get("NodeNames") is not None:
        names = body["NodeNames"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ExtenderInputError("ExtenderArgs.NodeNames must be a list of node names")
        return tuple(names), None
    items = as_mapping(body.get("Nodes")).get("items")
    if body.get("Nodes") is None or not isinstance(items, list):
        raise ExtenderInputError("ExtenderArgs needs NodeNames, or Nodes with items")
    objects = tuple(as_mapping(item) for item in items)
    names = tuple(str(as_mapping(o.get("metadata")).get("name", "")) for o in objects)
    if not all(names):
        raise ExtenderInputError("every node in ExtenderArgs.Nodes.items needs metadata.name")
    return names, objects


def pod_key(pod: Pod) -> str:
    """The pod's UID (what the scheduler keys pods by), or namespace/name without one; a key of
    over 128 characters (no UID is) by its sha256."""
    key = pod.uid or f"{pod.namespace}/{pod.name}"
    return key if len(key) <= 128 else hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class Verdict:
    """One node's answer: fits, or not and why; unresolvable when it does not fit even without
    the pods nfvplace assumed there."""

    node: str
    fits: bool
    reason: str = ""
    unresolvable: bool = False
    admission: Admission | None = None


def assumed_on(node: str, pods: Iterable[AssumedPod]) -> list[Consumption]:
    return [p.nodes[node] for p in pods if node in p.nodes]


def verdict(
    node: str, host: ComputeHostDescriptor | None, pod: Pod, assumed: Sequence[Consumption]
) -> Verdict:
    """Whether the node's kubelet admits the pod with the assumed pods there; when it does not,
    whether it would on what the node's NRT says (else the refusal is unresolvable)."""
    if host is None:
        return Verdict(node, True, "no NodeResourceTopology known: not checked")
    manager = topology_manager(host)
    reported = node_state(host)
    state = reported.copy()
    for consumption in assumed:
        state.take(consumption)
    try:
        answer = admit(pod, state, manager)
        if answer.admit:
            return Verdict(node, True, admission=answer)
        resolvable = bool(assumed) and admit(pod, reported, manager).admit
    except UndecidedError as exc:
        return Verdict(node, True, f"not checked: {exc}")
    if resolvable:
        return Verdict(
            node,
            False,
            f"nfvplace: {answer.reason} (counting {len(assumed)} pod(s) admitted here that the "
            "node's NodeResourceTopology does not show yet)",
        )
    return Verdict(node, False, f"nfvplace: {answer.reason}", unresolvable=True)


def filter_result(args: ExtenderArgs, verdicts: Sequence[Verdict]) -> dict[str, Any]:
    """`ExtenderFilterResult`: the nodes that fit (names, or the Node objects given), and why the
    others do not."""
    fits = [v.node for v in verdicts if v.fits]
    result: dict[str, Any] = {
        "FailedNodes": {v.node: v.reason for v in verdicts if not v.fits and not v.unresolvable},
        "FailedAndUnresolvableNodes": {v.node: v.reason for v in verdicts if v.unresolvable},
        "Error": "",
    }
    if args.node_objects is None:
        result["NodeNames"] = fits
        result["Nodes"] = None
    else:
        keep = set(fits)
        items = [
            o for o, name in zip(args.node_objects, args.node_names, strict=True) if name in keep
        ]
        result["Nodes"] = {"metadata": {}, "items": items}
        result["NodeNames"] = None
    return result


# --- assumed pods the node's NodeResourceTopology now shows ------------------------------------


def free_counts(state: NodeState) -> dict[str, dict[int, int]]:
    out = {"cpu": {n: p.free for n, p in state.cpus.items()}}
    for pools in (state.memory, state.devices):
        out.update({r: {n: p.free for n, p in per.items()} for r, per in pools.items()})
    return out


@dataclass
class Seen:
    """What one filter call learns about assumed pods from the nodes' new NodeResourceTopology."""

    views: dict[str, SeenNode] = field(default_factory=dict)
    shown: set[str] = field(default_factory=set)


def now_shown(
    node: str,
    generation: int,
    free: dict[str, dict[int, int]],
    view: SeenNode | None,
    pods: Sequence[AssumedPod],
    seen: Seen,
) -> None:
    """When the node changed since it was last seen, what its free counts lost since then
    accounts for the assumed pods there, oldest first, as far as it goes: those are shown."""
    if view is not None and generation <= view.generation:
        return
    seen.views[node] = SeenNode(generation, free)
    if view is None:
        return
    lost = {
        r: {n: max(view.free.get(r, {}).get(n, 0) - f, 0) for n, f in per.items()}
        for r, per in free.items()
    }
    for pod in pods:
        claim = pod.nodes.get(node)
        if pod.uid in seen.shown or not claim:
            continue
        if all(lost.get(r, {}).get(n, 0) >= a for r, per in claim.items() for n, a in per.items()):
            seen.shown.add(pod.uid)
            for r, per in claim.items():
                for n, a in per.items():
                    lost[r][n] -= a


# --- prioritize ----------------------------------------------------------------------------


def scores(
    args: ExtenderArgs,
    hosts: Mapping[str, ComputeHostDescriptor],
    pods: Sequence[AssumedPod],
    policy: str,
) -> list[dict[str, Any]]:
    """`HostPriorityList`: nfvplace's engine's score of each node (0 where nothing is known, or
    where the engine finds no placement), 0-10."""
    score = dict.fromkeys(args.node_names, 0)
    groups: dict[tuple[bool, bool], list[ComputeHostDescriptor]] = {}
    for node in args.node_names:
        host = hosts.get(node)
        if host is None:
            continue
        state = node_state(host)
        key = (str(topology_manager(host).scope) == "pod", state.memory_manager)
        taken = assumed_on(node, pods)
        groups.setdefault(key, []).append(with_consumption(host, taken) if taken else host)
    for (pod_scope, memory), members in groups.items():
        data = vm_of(args.pod, args.pools, [], pod_scope=pod_scope, memory=memory)
        try:
            vm = VmDescriptor.model_validate(data)
        except ValueError:
            continue  # a pod nothing NUMA-bound can be said of: no opinion
        for answer in evaluate(members, vm, policy=policy):
            score[answer.host] = round(answer.score * MAX_EXTENDER_PRIORITY / 100)
    return [{"Host": node, "Score": score[node]} for node in args.node_names]
