"""The scheduler extender's answers, as pure functions of the request and the decisions
(`decide`): `ExtenderArgs` and `ExtenderBindingArgs` in (`k8s.io/kube-scheduler/extender/v1`, Go
field names as JSON keys), `ExtenderFilterResult`, `HostPriorityList` out.

What each answer makes kube-scheduler (v1.34) do, and so which one nfvplace gives:

- a node in `NodeNames`: the pod may go there (prioritize then ranks it);
- `FailedAndUnresolvableNodes`: the node fails the pod whatever happens (preemption skips it);
  nfvplace says so only of what fails on the node's NodeResourceTopology alone;
- `FailedNodes`: the node fails for now (preemption may try it); nfvplace puts there the nodes
  that fail only because of the pods assumed on them, when some other node takes the pod;
- `Error`: the scheduling attempt failed; the pod goes to the backoff queue and is tried again in
  1, 2, 4, 8, then every 10 s (not to the unschedulable pods, which wait for a cluster event or the
  5-minute flush). nfvplace answers it when no node takes the pod and at least one would on its
  NodeResourceTopology alone: the refusal rests on pods bound but not shown yet, which the next
  updates of the objects will show (or which will go), so the pod is retried promptly; or would
  once its object shows gone the pods the pod watch saw leave it (`departed.py`).

Prioritize scores each node from the same decision: 0 where filter refuses, 1 to 10 where it
keeps.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import errors
from ...dialects.base import DialectError, as_mapping
from ...dialects.k8s_nrt import VF_POOLS_ANNOTATION, vf_pools
from ...dialects.kubernetes import Pod, read_pod_spec
from .verdicts import Verdicts


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
    raw_pod: Mapping[str, Any] | None = None  # the Pod object as sent (for the lint gate)


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
    return ExtenderArgs(pod, pools, names, objects, raw_pod)


def _nodes(body: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[Mapping[str, Any], ...] | None]:
    if body.get("NodeNames") is not None:
        names = body["NodeNames"]
        if not isinstance(names, list) or not set(map(type, names)) <= {str}:
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
    return key_of(pod.uid or f"{pod.namespace}/{pod.name}")


def key_of(key: str) -> str:
    return key if len(key) <= 128 else hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class BindingArgs:
    """`ExtenderBindingArgs`: the pod kube-scheduler chose `node` for."""

    name: str
    namespace: str
    uid: str
    node: str


def read_binding(body: Any) -> BindingArgs:
    """`ExtenderBindingArgs` from its JSON (`PodName`, `PodNamespace`, `PodUID`, `Node`)."""
    if not isinstance(body, Mapping):
        raise ExtenderInputError("ExtenderBindingArgs must be a JSON object")
    values = []
    for key in ("PodName", "PodNamespace", "PodUID", "Node"):
        value = body.get(key)
        if not isinstance(value, str) or (not value and key != "PodUID"):
            raise ExtenderInputError(f"ExtenderBindingArgs.{key} must be a non-empty string")
        values.append(value)
    return BindingArgs(*values)


def filter_result(
    args: ExtenderArgs, found: Verdicts, lint_refusal: str | None = None
) -> dict[str, Any]:
    """`ExtenderFilterResult` from the decisions (module docstring: which answer does what)."""
    names, reasons = found.names, found.reasons
    fits, resolvable = found.fits, found.resolvable
    if lint_refusal is not None:
        fits, resolvable = np.zeros_like(fits), np.zeros_like(resolvable)
        reasons = [lint_refusal] * len(names)
    waiting = np.flatnonzero(~fits & resolvable).tolist()
    if not fits.any() and waiting:
        return empty(retry_message(len(waiting), names, reasons, ~fits))
    kept = [names[i] for i in np.flatnonzero(fits).tolist()]
    result: dict[str, Any] = {
        "FailedNodes": {names[i]: reasons[i] for i in waiting},
        "FailedAndUnresolvableNodes": {
            names[i]: reasons[i] for i in np.flatnonzero(~fits & ~resolvable).tolist()
        },
        "Error": "",
    }
    if args.node_objects is None:
        result["NodeNames"] = kept
        result["Nodes"] = None
    else:
        keep = set(kept)
        items = [
            o for o, name in zip(args.node_objects, args.node_names, strict=True) if name in keep
        ]
        result["Nodes"] = {"metadata": {}, "items": items}
        result["NodeNames"] = None
    return result


def retry_message(waiting: int, names: Sequence[str], reasons: Sequence[str], refused: Any) -> str:
    """The `Error` that sends the pod to the backoff queue, with each node's reason."""
    listed = "; ".join(f"{names[i]}: {reasons[i]}" for i in np.flatnonzero(refused).tolist())
    return (
        f"{errors.KUBERNETES_RETRY}: no node takes the pod now, and {waiting} node(s) would "
        "once their NodeResourceTopology shows the pods bound there (or they go), or the pods "
        "that left gone: try again "
        f"({listed})"
    )


def empty(error: str) -> dict[str, Any]:
    """An `ExtenderFilterResult` that is only an `Error`."""
    return {
        "Nodes": None,
        "NodeNames": None,
        "FailedNodes": {},
        "FailedAndUnresolvableNodes": {},
        "Error": error,
    }


def priorities(args: ExtenderArgs, found: Verdicts) -> list[dict[str, Any]]:
    """`HostPriorityList`: each node's score, 0 where filter refuses, 1 to 10 where it keeps."""
    return [
        {"Host": name, "Score": score}
        for name, score in zip(found.names, found.score.tolist(), strict=True)
    ]
