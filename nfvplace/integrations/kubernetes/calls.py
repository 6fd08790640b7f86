"""The extender's two calls over the store: the nodes' CHDs (each read from its NodeResourceTopology
by `PUT /v1/hosts/{node}`, kept parsed while unchanged: `store/parsed.py`) and the assumed pods
every worker and replica shares."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ...models.chd import ComputeHostDescriptor
from ...store import Store
from ...store.assumed import AssumedPod, AssumedPods, Outcome, SeenNode
from ...store.parsed import ParsedHosts
from ...store.records import utc_now
from .extender import (
    ExtenderArgs,
    Seen,
    assumed_on,
    filter_result,
    free_counts,
    now_shown,
    pod_key,
    scores,
    verdict,
)
from .state import node_state


def filter_call(
    store: Store, nodes: ParsedHosts, args: ExtenderArgs, assume_s: float
) -> dict[str, Any]:
    """`ExtenderFilterResult` for `args`; the pod is assumed on every node that takes it (for
    `assume_s` seconds at most), in place of what it was assumed on before."""
    uid, now = pod_key(args.pod), utc_now()

    def compute(pods: list[AssumedPod], views: dict[str, SeenNode]) -> Outcome[dict[str, Any]]:
        read = nodes.read(args.node_names)
        hosts: dict[str, ComputeHostDescriptor] = {h: chd for h, (_g, chd) in read.items()}
        seen = Seen()
        for node, (generation, host) in read.items():
            free = free_counts(node_state(host))
            now_shown(node, generation, free, views.get(node), pods, seen)
        live = [p for p in pods if p.uid not in seen.shown]
        verdicts = [
            verdict(node, hosts.get(node), args.pod, assumed_on(node, live))
            for node in args.node_names
        ]
        taken = {
            v.node: v.admission.consumption
            for v in verdicts
            if v.fits and v.admission is not None and v.admission.consumption
        }
        assume = None
        if taken and assume_s > 0:
            name = f"{args.pod.namespace}/{args.pod.name}"[:512]
            assume = AssumedPod(uid, name, taken, now, now + timedelta(seconds=assume_s))
        return Outcome(filter_result(args, verdicts), seen.views, seen.shown, assume)

    return AssumedPods(store.engine).decide(uid, args.node_names, now, compute)


def prioritize_call(
    store: Store, nodes: ParsedHosts, args: ExtenderArgs, policy: str
) -> list[dict[str, Any]]:
    """`HostPriorityList` for `args`: the engine's score around the other assumed pods."""
    uid = pod_key(args.pod)
    pods = [p for p in AssumedPods(store.engine).live(utc_now()) if p.uid != uid]
    hosts = {h: chd for h, (_g, chd) in nodes.read(args.node_names).items()}
    return scores(args, hosts, pods, policy)


def bind_call(
    app: Any, store: Store, nodes: ParsedHosts, body: Any, assume_s: float
) -> dict[str, str]:
    """`ExtenderBindingResult` for an `ExtenderBindingArgs` body (contract: built next)."""
    return {"Error": "nfvplace: bind is not built yet"}
