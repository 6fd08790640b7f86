"""The extender's verbs and the watch's events over the store: the nodes (each read from its
NodeResourceTopology by `PUT /v1/hosts/{node}` or the built-in watch) and the pods assumed on
them, which every worker and replica shares.

Filter and prioritize read the nodes as columns (`verdicts.py`); bind reads its node kept parsed
while unchanged (`store/parsed.py`, counted once per descriptor here), decides again under the
lock and assumes the pod on that node only, then creates the Binding through the API server under
the node's own lock (a node's Bindings land in the order they were decided, which is the order
its kubelet admits them in; binds to other nodes go on meanwhile); a NodeResourceTopology update
(`reconcile`) and the pod watch (`pod_bound`, `pod_gone`) drop what the nodes now account for.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from ... import errors
from ...dialects.k8s_pod import read_pod
from ...dialects.kubernetes import Pod
from ...errors import LintError
from ...lint.gate import gate
from ...models.chd import ComputeHostDescriptor
from ...models.loading import SourceDocument
from ...store import Store
from ...store.assumed import AssumedPod, AssumedPods, Baseline, Shows
from ...store.parsed import ParsedHosts
from ...store.records import utc_now
from .again import kubelet_order
from .decide import NodeDecision, NodeView, decide, pod_shape
from .departed import retry_where_departed
from .extender import BindingArgs, ExtenderArgs, filter_result, key_of, pod_key, priorities
from .state import COUNTED
from .verdicts import Assumed, Seen, verdicts, worker_verdicts

log = logging.getLogger("nfvplace.kubernetes")


@dataclass(frozen=True)
class Door:
    """What the verbs need besides the request: the store, its nodes kept parsed, and the
    service's Kubernetes settings."""

    store: Store
    hosts: ParsedHosts
    pass_unregistered: bool = False
    nrt_interval_s: float = 60.0  # the exporter shows an admitted pod within this long


def assumed_on(door: Door, names: Collection[str], now: datetime, pod: Pod) -> Assumed:
    """The pods assumed on the nodes of `names` (uid, what it takes), oldest first, but `pod`:
    unbound, its own assumption is a bind's that created no Binding (yet), and its bind decides
    again (`assume`)."""
    own = pod_key(pod)
    on = AssumedPods(door.store.engine).on_nodes(now, names)
    out = {n: tuple((p.uid, p.consumption) for p in pods if p.uid != own) for n, pods in on.items()}
    return {node: pods for node, pods in out.items() if pods}


# --- the lint gate --------------------------------------------------------------------------------

_GATED: OrderedDict[str, str | None] = OrderedDict()
_GATED_LOCK = threading.Lock()


def lint_refusal(raw_pod: Mapping[str, Any] | None) -> str | None:
    """Why lint refuses the pod (its rules and messages), or None: what `nfvplace lint` refuses,
    the extender places nowhere. Kept per pod content (a burst of replicas is linted once)."""
    if raw_pod is None:
        return None
    body = {k: raw_pod.get(k) for k in ("apiVersion", "kind", "spec")}
    body["metadata"] = {"annotations": (raw_pod.get("metadata") or {}).get("annotations")}
    key = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
    with _GATED_LOCK:
        if key in _GATED:
            return _GATED[key]
    document = {"apiVersion": "v1", "kind": "Pod", **raw_pod}
    try:
        gate(SourceDocument(data=document, source="ExtenderArgs.Pod"), "pod")
        refusal = None
    except LintError as exc:
        issues = exc.issues or ()
        details = "; ".join(issue.message for issue in issues[:3])
        more = f" (and {len(issues) - 3} more)" if len(issues) > 3 else ""
        refusal = f"nfvplace: {exc.message}: {details}{more}"[:2000]
    with _GATED_LOCK:
        _GATED[key] = refusal
        while len(_GATED) > 4096:
            _GATED.popitem(last=False)
    return refusal


# --- the verbs ------------------------------------------------------------------------------------


class Filtered:
    """What each pod was last filtered on (this worker, the last `TTL_S` seconds: the pods
    assumed on the nodes, the nodes' rows as they were): the prioritize call of the same
    scheduling cycle scores from the decisions filter took, even when a bind or a node's new
    object lands between the two calls (the bind then decides again on the new state)."""

    TTL_S = 30.0

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, tuple[float, Seen]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, pod: str, known: Seen) -> None:
        with self._lock:
            self._kept[pod] = (time.monotonic(), known)
            self._kept.move_to_end(pod)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)

    def get(self, pod: str) -> Seen | None:
        with self._lock:
            kept = self._kept.get(pod)
        if kept is None or time.monotonic() - kept[0] > self.TTL_S:
            return None
        return kept[1]


FILTERED = Filtered()


def filter_call(door: Door, args: ExtenderArgs) -> dict[str, Any]:
    """`ExtenderFilterResult` for `args` (nothing is written)."""
    refusal = lint_refusal(args.raw_pod)
    assumed = assumed_on(door, args.node_names, utc_now(), args.pod)
    found, seen = verdicts(
        door.store, args.pod, args.node_names, assumed, "pack", door.pass_unregistered
    )
    FILTERED.put(pod_key(args.pod), seen)
    if refusal is None:  # "retry" where pods left that the nodes' objects do not show gone yet
        retry_where_departed(door.store, door.hosts, door.nrt_interval_s, args.pod, found, assumed)
    return filter_result(args, found, refusal)


def prioritize_call(door: Door, args: ExtenderArgs, policy: str) -> list[dict[str, Any]]:
    """`HostPriorityList` for `args`, from the same decisions as filter: on what filter saw,
    when this worker filtered the pod lately (`Filtered`), else on the nodes as they are."""
    if lint_refusal(args.raw_pod) is not None:
        return [{"Host": node, "Score": 0} for node in args.node_names]
    seen: Assumed | Seen | None = FILTERED.get(pod_key(args.pod))
    if seen is None:
        seen = assumed_on(door, args.node_names, utc_now(), args.pod)
    found, _ = verdicts(door.store, args.pod, args.node_names, seen, policy, door.pass_unregistered)
    return priorities(args, found)


class BindError(Exception):
    """The bind verb's `Error`: its code and why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")


Binder = Callable[[BindingArgs], None]
"""Creates the pod's Binding through the API server (raises with the API server's reason)."""
PodReader = Callable[[str, str], Mapping[str, Any]]
"""Reads a pod (namespace, name) from the API server."""


def bind_call(
    door: Door, args: BindingArgs, read_pod_of: PodReader, bind: Binder, assume_s: float
) -> dict[str, str]:
    """`ExtenderBindingResult`: under the lock, the node decided again for the pod, the Binding
    created and the pod assumed there; a refusal or a failed Binding leaves nothing behind."""
    try:
        pod = read_pod(
            {"apiVersion": "v1", "kind": "Pod", **read_pod_of(args.namespace, args.name)}
        )[0]
    except Exception as exc:  # the API server's or the reader's reason, to the pod's events
        return {"Error": f"{errors.KUBERNETES_BIND_FAILED}: cannot read the pod: {exc}"}
    if args.uid and pod.uid and pod.uid != args.uid:
        return {
            "Error": f"{errors.KUBERNETES_BIND_FAILED}: pod {args.namespace}/{args.name} is "
            f"{pod.uid}, not {args.uid} (it was replaced)"
        }
    uid = key_of(args.uid) if args.uid else pod_key(pod)

    def create() -> None:
        try:
            bind(args)
        except Exception as exc:
            if bound_to(read_pod_of, args) == args.node:
                return  # an earlier call, timed out on the scheduler's side, bound it
            raise BindError(
                errors.KUBERNETES_BIND_FAILED, f"the API server refused: {exc}"
            ) from exc

    try:
        assume(door, pod, uid, args.node, assume_s, create, lambda: unbound(read_pod_of, args))
    except BindError as exc:
        return {"Error": str(exc)}
    return {"Error": ""}


def unbound(read_pod_of: PodReader, args: BindingArgs) -> bool:
    """The API server says the pod is bound to no node (False when it cannot be read)."""
    try:
        return not (read_pod_of(args.namespace, args.name).get("spec") or {}).get("nodeName")
    except Exception:
        return False


def bound_to(read_pod_of: PodReader, args: BindingArgs) -> str:
    """The node the pod is bound to now ("" unbound, or unreadable)."""
    try:
        pod = read_pod_of(args.namespace, args.name)
    except Exception:
        return ""
    return str((pod.get("spec") or {}).get("nodeName") or "")


def assume(
    door: Door,
    pod: Pod,
    uid: str,
    node: str,
    assume_s: float,
    create: Callable[[], None],
    unbound: Callable[[], bool] = lambda: False,
) -> None:
    """Decide `pod` on `node` again, under the lock, and `create` its Binding there under the
    node's own lock; the pod is assumed there (unless it takes nothing nfvplace counts, or
    `assume_s` is 0). Raises BindError when the node no longer admits it, or `create` does; then
    nothing is left behind. A pod assumed already but `unbound` was left by a bind whose process
    died before its Binding (`AssumedPods.released`): it is decided again."""
    if not AssumedPods(door.store.engine).released(uid, utc_now(), unbound):
        create()  # bound already (the pod watch saw it): the API server will say where
        return
    if node not in door.hosts.read([node]):
        decision = decide(pod, pod_shape(pod), None, node, "pack", door.pass_unregistered)
        if not decision.fits:
            raise BindError(errors.KUBERNETES_BIND_REFUSED, decision.reason)
        create()
        return
    decision, _ = assumed_there(door, pod, uid, node, assume_s, create)
    if not decision.fits:
        raise BindError(errors.KUBERNETES_BIND_REFUSED, decision.reason)


def assumed_there(
    door: Door,
    pod: Pod,
    uid: str,
    node: str,
    assume_s: float,
    create: Callable[[], None] | None = None,
) -> tuple[NodeDecision, bool]:
    """Under the lock, the decision for `pod` on `node` (a registered one, read under the lock)
    counting the pods assumed there, and the pod assumed there when the node takes it (and it
    pins something).

    When the node takes it, `create` (its Binding) runs once the decision is committed, under
    the node's own lock, taken before the decision: a node's kubelet admits its pods in the order
    their Bindings land, each on the NUMA node that fits it then, so the Bindings to a node must
    land in the order nfvplace decided them (bound the other way round, two pods that both fit
    can leave the later one no NUMA node that holds it). Binds to other nodes decide meanwhile.
    When `create` raises, the pod is not left assumed."""
    now = utc_now()

    def check(
        known: list[AssumedPod], through: Connection
    ) -> tuple[tuple[NodeDecision, bool], AssumedPod | None, Baseline]:
        generation, host = door.hosts.read([node], through)[node]
        state, manager = COUNTED.of(node, host)
        baseline = (generation, state.free_totals())
        if any(p.uid == uid for p in known):  # assumed meanwhile, or accounted for already
            return (NodeDecision(node, True, 0), False), None, baseline
        others = tuple((p.uid, p.consumption) for p in known if p.counts)
        view = NodeView(node, generation, state, manager, others)
        decision = decide(pod, pod_shape(pod), view, node, "pack", door.pass_unregistered)
        log.debug(
            "pod %s on %s (generation %d, %d pod(s) assumed there): %s %s",
            uid,
            node,
            generation,
            len(others),
            "takes" if decision.fits else "refused:",
            decision.consumption if decision.fits else decision.reason,
        )
        if not decision.fits or not decision.consumption or assume_s <= 0:
            return (decision, False), None, baseline
        name = f"{pod.namespace}/{pod.name}"[:512]
        expires = now + timedelta(seconds=assume_s)
        assumed = AssumedPod(uid, name, node, decision.consumption, now, expires, generation)
        return (decision, True), assumed, baseline

    def land(answer: tuple[NodeDecision, bool]) -> None:
        if answer[0].fits and create is not None:
            create()

    return AssumedPods(door.store.engine).assume(node, now, check, land)


# --- what the cluster says ------------------------------------------------------------------------


def reconcile(
    store: Store,
    node: str,
    generation: int,
    host: ComputeHostDescriptor,
    shows: Shows | None = None,
) -> list[str]:
    """A node's NodeResourceTopology changed: its row of this worker's columns is written, and
    the assumed pods it shows (`shows`: by its pod fingerprint) or its totals account for are
    dropped."""
    worker_verdicts(store).nodes.put(node, generation, host)
    state, manager = COUNTED.of(node, host)
    free = state.free_totals()
    if shows is not None:  # the pods it does not show, placed again on its counts
        shows = replace(shows, place=kubelet_order(state, manager))
    shown = AssumedPods(store.engine).reconcile(node, generation, free, utc_now(), shows)
    log.debug(
        "node %s generation %d, free %s: shows assumed pods %s", node, generation, free, shown
    )
    return shown


def pod_bound(door: Door, raw: Mapping[str, Any], assume_s: float) -> bool:
    """The pod watch saw `raw` bound to a node, by whichever binder (a pod outside the
    extender's `managedResources`, another scheduler): assume it there, as the kubelet would
    admit it, until the node's NodeResourceTopology accounts for it. True when assumed."""
    node = str((raw.get("spec") or {}).get("nodeName") or "")
    if not node or assume_s <= 0 or node not in door.hosts.read([node]):
        return False
    pod = read_pod({"apiVersion": "v1", "kind": "Pod", **raw})[0]
    uid = pod_key(pod)
    if AssumedPods(door.store.engine).live(utc_now(), [node], uid):
        return False  # nfvplace bound it (or saw it) already
    return assumed_there(door, pod, uid, node, assume_s)[1]


def pod_admitted(door: Door, uid: str) -> bool:
    """The pod watch saw the pod running: the exporter shows it within its interval, whatever
    the node's totals did (a pod leaving as it arrived leaves them unchanged): where the node's
    objects do not tell which pods they show (`AssumedPod.ended`), its assumption ends once that
    interval has passed and a newer object than it was decided on was read. True: ends sooner."""
    until = utc_now() + timedelta(seconds=door.nrt_interval_s)
    sooner = AssumedPods(door.store.engine).admitted(key_of(uid), until)
    log.debug("pod %s running: assumed until %s and its node's next NRT (%s)", uid, until, sooner)
    return sooner


def pod_gone(door: Door, uid: str) -> bool:
    """The pod was deleted or finished: its assumption (if any) goes."""
    dropped = AssumedPods(door.store.engine).drop(key_of(uid))
    log.debug("pod %s gone: assumption dropped (%s)", uid, dropped)
    return dropped


def node_gone(door: Door, node: str) -> None:
    AssumedPods(door.store.engine).drop_node(node)
