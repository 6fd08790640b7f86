"""A small Kubernetes API server on 127.0.0.1 for the door's tests: the few REST calls
`nfvplace serve --kubeconfig` makes, spoken as the real kube-apiserver speaks them (lists with a
resourceVersion, watches as JSON lines from one, a 409 Conflict for a pod bound already).

- GET /apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies[?watch=true&resourceVersion=N]
- GET /api/v1/pods[?watch=true&resourceVersion=N]
- GET /api/v1/namespaces/{ns}/pods/{name}
- POST /api/v1/namespaces/{ns}/pods/{name}/binding

The real kube-apiserver with etcd runs in the k8s-loop end-to-end test; this one lets the Python
tests drive the watch and the bind verb through real HTTP and a real kubeconfig.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import yaml

NRT_PATH = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"
PODS_PATH = "/api/v1/pods"


class KubeApi:
    """The objects, their resourceVersions and the event log watches read from."""

    def __init__(self) -> None:
        self.version = 0
        self.objects: dict[str, dict[str, dict[str, Any]]] = {"nrt": {}, "pods": {}}
        self.events: list[tuple[int, str, str, dict[str, Any]]] = []  # (rv, kind, type, obj)
        self.bindings: list[tuple[str, str]] = []  # (namespace/name, node)
        self.refuse_bindings = False
        self.held: set[str] = set()  # kinds whose watches deliver nothing until `release`d
        self.changed = threading.Condition()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> KubeApi:
        self.thread.start()
        return self

    def stop(self) -> None:
        with self.changed:
            self.version += 1
            self.changed.notify_all()
        self.server.shutdown()
        self.server.server_close()

    def kubeconfig(self, folder: Path) -> Path:
        path = folder / "kubeconfig"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "test", "cluster": {"server": self.url}}],
            "users": [{"name": "nfvplace", "user": {"token": "secret-token-never-logged"}}],
            "contexts": [{"name": "test", "context": {"cluster": "test", "user": "nfvplace"}}],
            "current-context": "test",
        }
        path.write_text(yaml.safe_dump(config))
        return path

    # --- changing the cluster ------------------------------------------------------------------

    def put(self, kind: str, obj: dict[str, Any]) -> None:
        key = _key(obj)
        with self.changed:
            self.version += 1
            obj = copy.deepcopy(obj)
            obj.setdefault("metadata", {})["resourceVersion"] = str(self.version)
            event = "MODIFIED" if key in self.objects[kind] else "ADDED"
            self.objects[kind][key] = obj
            self.events.append((self.version, kind, event, obj))
            self.changed.notify_all()

    def delete(self, kind: str, key: str) -> None:
        with self.changed:
            obj = self.objects[kind].pop(key)
            self.version += 1
            self.events.append((self.version, kind, "DELETED", obj))
            self.changed.notify_all()

    def hold(self, kind: str) -> None:
        """The watches of `kind` fall behind: they deliver nothing until `release`."""
        with self.changed:
            self.held.add(kind)

    def release(self, kind: str) -> None:
        with self.changed:
            self.held.discard(kind)
            self.changed.notify_all()

    def pod(self, namespace: str, name: str) -> dict[str, Any]:
        return self.objects["pods"][f"{namespace}/{name}"]

    def _bind(self, namespace: str, name: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        key = f"{namespace}/{name}"
        pod = self.objects["pods"].get(key)
        if pod is None:
            return 404, _status(404, "NotFound", f'pods "{name}" not found')
        if self.refuse_bindings:
            return 500, _status(500, "InternalError", "etcd is away")
        if pod["spec"].get("nodeName"):
            return 409, _status(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on pods/binding "{name}": pod '
                f'{name} is already assigned to node "{pod["spec"]["nodeName"]}"',
            )
        node = body["target"]["name"]
        bound = copy.deepcopy(pod)
        bound["spec"]["nodeName"] = node
        self.bindings.append((key, node))
        self.put("pods", bound)
        return 201, {"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201}

    # --- HTTP -----------------------------------------------------------------------------------

    def _list(self, kind: str) -> dict[str, Any]:
        with self.changed:
            return {
                "kind": "List",
                "apiVersion": "v1",
                "metadata": {"resourceVersion": str(self.version)},
                "items": [copy.deepcopy(o) for o in self.objects[kind].values()],
            }

    def _watch(self, kind: str, since: int) -> Iterator[bytes]:
        seen = since
        while True:
            with self.changed:
                fresh = [e for e in self.events if e[0] > seen and e[1] == kind]
                fresh = [] if kind in self.held else fresh
                if not fresh:
                    self.changed.wait(0.5)
                    if not self.thread.is_alive():
                        return
                    continue
            for version, _kind, event, obj in fresh:
                seen = version
                yield (json.dumps({"type": event, "object": obj}) + "\n").encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                query = parse_qs(url.query)
                kind = {NRT_PATH: "nrt", PODS_PATH: "pods"}.get(url.path)
                if kind is None:
                    parts = url.path.strip("/").split("/")
                    if len(parts) == 6 and parts[:3] == ["api", "v1", "namespaces"]:
                        pod = api.objects["pods"].get(f"{parts[3]}/{parts[5]}")
                        if pod is None:
                            self._send(404, _status(404, "NotFound", "no such pod"))
                        else:
                            self._send(200, pod)
                        return
                    self._send(404, _status(404, "NotFound", url.path))
                    return
                if query.get("watch") != ["true"] and query.get("watch") != ["1"]:
                    self._send(200, api._list(kind))
                    return
                since = int(query.get("resourceVersion", ["0"])[0] or 0)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for line in api._watch(kind, since):
                        self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    return

            def do_POST(self) -> None:
                parts = urlparse(self.path).path.strip("/").split("/")
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if (
                    len(parts) == 7
                    and parts[:3] == ["api", "v1", "namespaces"]
                    and parts[6] == ("binding")
                ):
                    self._send(*api._bind(parts[3], parts[5], body))
                    return
                self._send(404, _status(404, "NotFound", self.path))

        return Handler


def _key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata", {})
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def wait_until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll `check` every 50 ms until it holds; AssertionError naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def watched_nodes(client: httpx.Client) -> int:
    """The nodes the door's watch has read (0 until the watching worker has written its status:
    `watch` is null then, in every worker)."""
    return int((client.get("/k8s/v1/status").json()["watch"] or {}).get("nodes") or 0)


VF = "intel.com/sriov_dp"
"""The SR-IOV device plugin resource the tests' nodes and pods use."""


def nrt(
    name: str, free: tuple[int, int] = (16, 16), vfs: tuple[int, int] = (4, 4)
) -> dict[str, Any]:
    def zone(n: int) -> dict[str, Any]:
        return {
            "name": f"node-{n}",
            "type": "Node",
            "resources": [
                {"name": "cpu", "capacity": "18", "allocatable": "16", "available": str(free[n])},
                {"name": VF, "capacity": "4", "allocatable": "4", "available": str(vfs[n])},
            ],
        }

    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name},
        "attributes": [
            {"name": "topologyManagerPolicy", "value": "single-numa-node"},
            {"name": "topologyManagerScope", "value": "container"},
        ],
        "zones": [zone(0), zone(1)],
    }


def cnf_pod(cpus: int, uid: str = "cnf", vf: str = VF) -> dict[str, Any]:
    """A Guaranteed CNF pod: one container with `cpus` exclusive CPUs, 1 GiB and one VF."""
    limits = {"cpu": str(cpus), "memory": "1Gi", vf: "1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": uid, "namespace": "ns", "uid": uid},
        "spec": {"containers": [{"name": "dp", "resources": {"limits": limits}}]},
    }
