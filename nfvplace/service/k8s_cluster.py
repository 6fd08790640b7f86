"""The Kubernetes API server, for the extender's door (`nfvplace serve --kubeconfig FILE` or
`--in-cluster`), through lightkube: pod Bindings for the bind verb, and the built-in watch of
NodeResourceTopology objects (topology.node.k8s.io/v1alpha2) and pods.

The watch lists, then watches from the list's resourceVersion, and lists again after any error
(a 410 Gone, a dropped connection), with a growing pause (0.5 s to 10 s): what changed while it
was away is read as the new list says (an NRT or pod gone meanwhile is dropped). Each NRT object
is stored as `PUT /v1/hosts/{node}` stores it (`routers.hosts.report`: the same parse, lint gate
and reconciliation). Pods: what the watch sees is read by `k8s_pods.PodBook` (a pod bound is
assumed, one gone is dropped and kept as departed until its node's object shows it gone).

RBAC (docs/integrations/kubernetes.md): get, list, watch noderesourcetopologies and pods; create
pods/binding. No token or certificate is ever logged.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lightkube import ApiError, Client, ConfigError, KubeConfig
from lightkube.core import decoders
from lightkube.generic_resource import create_global_resource
from lightkube.models.core_v1 import ObjectReference
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Pod, PodBinding

from .. import errors
from ..errors import DescriptorError, Issue, NfvplaceError
from ..integrations.kubernetes.calls import Door, node_gone
from ..integrations.kubernetes.extender import BindingArgs
from ..integrations.kubernetes.node_pods import NodePods
from ..integrations.kubernetes.verdicts import prime_in_background
from ..models.loading import SourceDocument
from ..store import HostInUseError
from .k8s_pods import PodBook, name_of
from .problems import ProblemError
from .settings import Settings, SettingsError

log = logging.getLogger("nfvplace.kubernetes")

NRT_API = "topology.node.k8s.io/v1alpha2"
NRT = create_global_resource(
    "topology.node.k8s.io", "v1alpha2", "NodeResourceTopology", "noderesourcetopologies"
)


def warm_up() -> None:
    """Build lightkube's decoders (msgspec) for every type the door reads, on one thread: msgspec
    0.22 crashes the process when two threads build the decoder of one type at once (the watch's
    threads and the bind verb's would, on the first objects they read)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "resourceVersion": "1"}}
    nrt = {"apiVersion": f"{NRT_API}", "kind": "NodeResourceTopology", "metadata": pod["metadata"]}
    for res, obj in ((Pod, pod), (NRT, nrt)):
        body = json.dumps(obj).encode()
        decoders.decode_object(body, res)
        decoders.decode_list(json.dumps({"metadata": {}, "items": [obj]}).encode(), res)
        decoders.decode_watch_event(json.dumps({"type": "ADDED", "object": obj}).encode())
    decoders.decode_status(b'{"kind": "Status", "status": "Failure", "code": 500}')
    with contextlib.suppress(ValueError):
        decoders.decode_object(b'{"kind": "Status", "status": "Success"}', PodBinding)


def cluster_config(settings: Settings) -> Any:
    """The API server's address and credentials the settings name (None: no cluster); raises
    SettingsError naming the flag and the fix when they cannot be read."""
    try:
        if settings.in_cluster:
            return KubeConfig.from_service_account()
        if settings.kubeconfig:
            config = KubeConfig.from_file(settings.kubeconfig).get(
                context_name=settings.kube_context
            )
            if config is None:
                raise ConfigError("it has no current context")
            return config
    except ConfigError as exc:
        flag = "--in-cluster" if settings.in_cluster else "--kubeconfig"
        raise SettingsError(
            errors.SERVICE_CONFIG,
            "cannot read the cluster's address and credentials",
            file=settings.kubeconfig if not settings.in_cluster else None,
            issues=(Issue(str(exc), path=flag, hint=CONFIG_HINT),),
        ) from None
    return None


CONFIG_HINT = (
    "give a readable kubeconfig (and --kube-context NAME where it has no current context), or "
    "--in-cluster inside a pod with a service account"
)


def connect(settings: Settings) -> Client | None:
    """A client for the API server the settings name (None: no cluster configured)."""
    config = cluster_config(settings)
    if config is None:
        return None
    warm_up()
    return Client(config=config, field_manager="nfvplace")


def read_pod(client: Client, namespace: str, name: str) -> Mapping[str, Any]:
    pod = client.get(Pod, name, namespace=namespace)
    data: Mapping[str, Any] = pod.to_dict()
    return data


def bind(client: Client, args: BindingArgs) -> None:
    """Create the pod's Binding (the pods/binding subresource, as kube-scheduler's binder)."""
    binding = PodBinding(
        metadata=ObjectMeta(name=args.name, namespace=args.namespace, uid=args.uid or None),
        target=ObjectReference(apiVersion="v1", kind="Node", name=args.node),
    )
    try:
        client.create(binding, name=args.name, namespace=args.namespace)
    except ApiError as exc:
        raise RuntimeError(f"{exc.status.code} {exc.status.reason}: {exc.status.message}") from None
    except ValueError:
        # created: the API server answers a binding with a Status (201 Success), which lightkube
        # then fails to read as a Binding; an answer of 4xx or 5xx is an ApiError above
        pass


STATUS_ENV = "NFVPLACE_K8S_WATCH_STATUS"
"""A file where the watching worker writes its state for the server's other workers (set by
`nfvplace serve`)."""


def shared_status() -> dict[str, Any] | None:
    """The watch's state as the watching worker last wrote it (None: no file, or not yet)."""
    path = os.environ.get(STATUS_ENV)
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class WatchState:
    """What the watch has read: whether each list is in, how many objects, and the last error;
    written to $NFVPLACE_K8S_WATCH_STATUS (at most once a second) for the other workers."""

    nrt_synced: bool = False
    pods_synced: bool = False
    nodes: int = 0
    pods: int = 0
    restarts: int = 0
    last_error: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    written: tuple[float, str] = (0.0, "")
    pending: bool = False

    def as_json(self) -> dict[str, Any]:
        with self.lock:
            return {
                "synced": {"nodeResourceTopologies": self.nrt_synced, "pods": self.pods_synced},
                "nodes": self.nodes,
                "pods": self.pods,
                "restarts": self.restarts,
                "last_error": self.last_error,
            }

    def publish(self, force: bool = False) -> None:
        """Write the state to $NFVPLACE_K8S_WATCH_STATUS when it changed: at once when `force`d
        (a list synced, an error), else at most once a second (a write held back is made a
        second later)."""
        path = os.environ.get(STATUS_ENV)
        if not path:
            return
        with self.lock:
            wait = 0.0 if force else 1.0 - (time.monotonic() - self.written[0])
            if wait > 0:
                if not self.pending:
                    self.pending = True
                    timer = threading.Timer(wait, self.publish, kwargs={"force": True})
                    timer.daemon = True
                    timer.start()
                return
            self.pending = False
        text = json.dumps(self.as_json())
        with self.lock:
            if text == self.written[1]:
                return
            temporary = Path(f"{path}.{os.getpid()}.{threading.get_ident()}")
            temporary.write_text(text)
            temporary.replace(path)  # readers see the old file or the new one, never half of it
            self.written = (time.monotonic(), text)


class Report(Protocol):
    """Stores one NodeResourceTopology as `PUT /v1/hosts/{node}` does (`routers.hosts.report`)."""

    def __call__(self, document: SourceDocument, host_id: str, *, pods: NodePods) -> object: ...


class Watch:
    """The two watches, each on a thread of its own, until `stop`."""

    def __init__(self, client: Client, door: Door, report: Report) -> None:
        self.client = client
        self.door = door
        self.report = report
        self.state = WatchState()
        self.nodes: dict[str, str] = {}  # NRT name -> resourceVersion stored
        self.book = PodBook(door)  # what the pod watch saw
        self.stopping = threading.Event()
        self.threads = [
            threading.Thread(target=self._forever, args=(self._nrts,), name="nfvplace-nrt-watch"),
            threading.Thread(target=self._forever, args=(self._pods,), name="nfvplace-pod-watch"),
        ]

    def start(self) -> None:
        for thread in self.threads:
            thread.daemon = True
            thread.start()

    def stop(self) -> None:
        self.stopping.set()

    def _forever(self, run: Callable[[], None]) -> None:
        pause = 0.5
        while not self.stopping.is_set():
            try:
                run()
                pause = 0.5
            except Exception as exc:  # the API server went away, a 410, a bad object
                with self.state.lock:
                    self.state.restarts += 1
                    self.state.last_error = f"{type(exc).__name__}: {exc}"[:500]
                self.state.publish(force=True)
                log.warning("kubernetes watch: %s; listing again in %.1f s", exc, pause)
                self.stopping.wait(pause)
                pause = min(pause * 2, 10.0)

    # --- NodeResourceTopology -------------------------------------------------------------------

    def _nrts(self) -> None:
        listed = self.client.list(NRT)
        known = self.nodes
        before = set(known)
        names = set()
        for obj in listed:
            data = _plain(obj)
            names.add(name_of(data))
            self._nrt("ADDED", data, known)
        for gone in before - names:  # deleted while the watch was away
            self._nrt_gone(gone, known)
        with self.state.lock:
            self.state.nrt_synced, self.state.nodes = True, len(known)
        self.state.publish(force=True)
        for kind, obj in self._events(NRT, listed.resourceVersion):
            self._nrt(kind, _plain(obj), known)

    def _nrt(self, kind: str, data: Mapping[str, Any], known: dict[str, str]) -> None:
        name = str((data.get("metadata") or {}).get("name") or "")
        if not name:
            return
        if kind == "DELETED":
            self._nrt_gone(name, known)
            return
        version = str((data.get("metadata") or {}).get("resourceVersion") or "")
        if version and known.get(name) == version:
            return  # listed again, unchanged
        try:
            document = SourceDocument(data=dict(data), source=f"NodeResourceTopology {name}")
            self.report(document, name, pods=self.book.pods)
            known[name] = version
        except (ProblemError, DescriptorError, NfvplaceError) as exc:
            log.warning("NodeResourceTopology %s not stored: %s", name, exc)
        with self.state.lock:
            self.state.nodes = len(known)
        self.state.publish()

    def _nrt_gone(self, name: str, known: dict[str, str]) -> None:
        """A node's NodeResourceTopology was deleted: the node is unregistered again."""
        known.pop(name, None)
        node_gone(self.door, name)
        self.book.node_gone(name)
        try:
            self.door.store.delete_host(name)
        except HostInUseError as exc:  # placements of the REST API hold it: kept
            log.warning("NodeResourceTopology %s deleted; host kept: %s", name, exc)
        with self.state.lock:
            self.state.nodes = len(known)
        self.state.publish()  # the count for the other workers (a deletion may be the last event)

    # --- pods -----------------------------------------------------------------------------------

    def _pods(self) -> None:
        listed = self.client.list(Pod, namespace="*")
        count = self.book.listed(_plain(obj) for obj in listed)
        with self.state.lock:
            self.state.pods_synced, self.state.pods = True, count
        self.state.publish(force=True)
        for kind, obj in self._events(Pod, listed.resourceVersion, namespace="*"):
            count = self.book.event(kind, _plain(obj))
            with self.state.lock:
                self.state.pods = count
            self.state.publish()

    def _events(self, res: Any, version: str, **options: Any) -> Iterator[tuple[str, Any]]:
        """Watch events from `version` until the stream breaks (then the caller lists again) or
        the watch stops."""
        # the API server ends each watch after `server_timeout` s (lightkube then watches again
        # from the last version): a connection that died silently is noticed within that time
        stream = self.client.watch(res, resource_version=version, server_timeout=300, **options)
        for kind, obj in stream:
            if self.stopping.is_set():
                return
            yield kind, obj


def _plain(obj: Any) -> Mapping[str, Any]:
    """A lightkube object as the API server's JSON."""
    return obj.to_dict()  # type: ignore[no-any-return]


def started(
    settings: Settings, door: Door, report: Report, watching: bool
) -> tuple[Client | None, Watch | None]:
    """The client (for the bind verb) and, in the one worker that watches (`watching`), the
    started watch; (None, None) when no cluster is configured."""
    client = connect(settings)
    if client is not None:  # every worker answers kube-scheduler: count its nodes before it asks
        prime_in_background(door.store)
    if client is None or not watching:
        return client, None
    watch = Watch(client, door, report)
    watch.start()
    return client, watch
