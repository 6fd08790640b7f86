"""What the Kubernetes dialects share: quantities, Lists, and a pod's requests as the kubelet counts
them (QoS class, init containers, restartable sidecars, exclusive CPUs, memory and devices).

The counting follows the kubelet (v1.34): `ComputePodQOS` (pkg/apis/core/v1/helper/qos), the CPU
manager's `guaranteedCPUs`/`podGuaranteedCPUs` and the memory manager's `getPodRequestedResources`
(the KEP-753 rule: the pod needs the larger of its init containers at their peak, each with the
sidecars started before it, and its app containers with every sidecar), and the device manager's
requests, which come from limits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..models.loading import PathKey
from .base import ASSUMED, DialectError, Note, as_list, as_mapping

_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>\d+(?:\.\d*)?|\.\d+)"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d{1,2})?$"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
MAX_QUANTITY = Fraction(2**62)
"""Largest quantity read (about 4.6 EiB); anything larger is refused, not wrapped."""

HUGEPAGES_PREFIX = "hugepages-"
NATIVE = ("cpu", "memory", "ephemeral-storage", "storage", "pods")
GUARANTEED, BURSTABLE, BEST_EFFORT = "Guaranteed", "Burstable", "BestEffort"


def parse_quantity(value: Any, what: str, path: PathKey) -> Fraction:
    """A Kubernetes `resource.Quantity` (`"4"`, `"500m"`, `"1Gi"`, `"1e3"`) as an exact number."""
    if type(value) is str and value.isascii() and value.isdigit() and len(value) < 19:
        return Fraction(int(value))  # a plain count (most of a NodeResourceTopology): fast
    if isinstance(value, bool) or value is None:
        raise DialectError(f"{what} must be a quantity such as '4', '500m' or '1Gi'", path)
    if isinstance(value, int | float):
        text = repr(value) if isinstance(value, float) else str(value)
    else:
        text = str(value).strip()
    match = _QUANTITY.match(text)
    if match is None:
        raise DialectError(
            f"{what} {value!r} is not a Kubernetes quantity (e.g. '4', '500m', '1Gi', '2G')", path
        )
    number = Fraction(match["number"])
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        number *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        number *= Fraction(10) ** _DECIMAL[suffix]
    elif suffix:
        number *= Fraction(10) ** int(suffix[1:])
    if match["sign"] == "-" and number:
        raise DialectError(f"{what} must not be negative, got {value!r}", path)
    if number > MAX_QUANTITY:
        raise DialectError(f"{what} {value!r} is larger than any resource of a node", path)
    return number


def whole(quantity: Fraction) -> int:
    """A quantity rounded up to a whole number (bytes, devices), as Kubernetes' `Value()` does."""
    return -(-quantity.numerator // quantity.denominator)


def is_hugepages(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def page_size_bytes(name: str, path: PathKey = ()) -> int:
    """`hugepages-2Mi` -> 2097152."""
    size = whole(parse_quantity(name[len(HUGEPAGES_PREFIX) :], f"page size of {name}", path))
    if size < 4096 or size & (size - 1):
        raise DialectError(f"{name} does not name a page size (a power of two from 4Ki)", path)
    return size


def is_device(name: str) -> bool:
    """An extended (device plugin) resource: `vendor.com/name`, outside `kubernetes.io`."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def list_items(data: Any) -> list[Any] | None:
    """The items of a Kubernetes List (`kind: List` or `kind: ...List`), or None."""
    if not isinstance(data, Mapping):
        return None
    kind = data.get("kind")
    items = data.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        return items
    return None


def api_group(data: Mapping[str, Any]) -> str:
    """`topology.node.k8s.io/v1alpha2` -> `topology.node.k8s.io`; `v1` -> `` (the core group)."""
    api = str(data.get("apiVersion", ""))
    return api.rsplit("/", 1)[0] if "/" in api else ""


# --- a pod's containers, as the kubelet reads them ----------------------------------------------

INIT, SIDECAR, APP = "init", "sidecar", "app"


@dataclass(frozen=True)
class Container:
    """One container's requests and limits (resource name -> exact quantity: CPUs in cores,
    memory and hugepages in bytes, devices in units). `kind` is init, sidecar (a restartable init
    container) or app; `path` is where it sits in the source document."""

    name: str
    kind: str
    requests: Mapping[str, Fraction]
    limits: Mapping[str, Fraction]
    path: PathKey = ()


@dataclass(frozen=True)
class Pod:
    """A pod as the kubelet's resource managers see it: its QoS class and its containers, init
    containers (sidecars among them) first, in order, then the app containers."""

    name: str
    namespace: str
    uid: str | None
    qos: str
    containers: tuple[Container, ...]
    pod_level_resources: bool = False
    notes: tuple[Note, ...] = field(default=(), compare=False)

    @property
    def init_containers(self) -> tuple[Container, ...]:
        return tuple(c for c in self.containers if c.kind != APP)

    @property
    def app_containers(self) -> tuple[Container, ...]:
        return tuple(c for c in self.containers if c.kind == APP)


def _resources(raw: Any, path: PathKey) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for name, value in as_mapping(raw).items():
        out[str(name)] = parse_quantity(value, f"'{name}'", (*path, str(name)))
    return out


def read_container(raw: Any, kind: str, path: PathKey, notes: list[Note]) -> Container:
    """A container's resources; requests default to limits, as the API server defaults them."""
    spec = as_mapping(raw)
    resources = as_mapping(spec.get("resources"))
    requests = _resources(resources.get("requests"), (*path, "resources", "requests"))
    limits = _resources(resources.get("limits"), (*path, "resources", "limits"))
    defaulted = sorted(set(limits) - set(requests))
    if defaulted:
        notes.append(
            Note(
                (*path, "resources", "limits"),
                f"requests of {', '.join(defaulted)} default to their limits (as the API server "
                "sets them)",
                ASSUMED,
            )
        )
        requests = {**{name: limits[name] for name in defaulted}, **requests}
    if kind == INIT and spec.get("restartPolicy") == "Always":
        kind = SIDECAR
    return Container(str(spec.get("name", f"container-{path[-1]}")), kind, requests, limits, path)


def qos_class(containers: Iterable[Container]) -> str:
    """`ComputePodQOS` over the containers' cpu and memory (pod-level resources aside)."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for container in containers:
        for name, quantity in container.requests.items():
            if name in ("cpu", "memory") and quantity > 0:
                requests[name] = requests.get(name, Fraction(0)) + quantity
        found = set()
        for name, quantity in container.limits.items():
            if name in ("cpu", "memory") and quantity > 0:
                found.add(name)
                limits[name] = limits.get(name, Fraction(0)) + quantity
        if not {"cpu", "memory"} <= found:
            guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed and all(limits.get(n) == q for n, q in requests.items()):
        return GUARANTEED if len(requests) == len(limits) else BURSTABLE
    return BURSTABLE


def read_pod_spec(
    metadata: Mapping[str, Any], spec: Mapping[str, Any], status: Any, path: PathKey
) -> Pod:
    """A pod (or a pod template) read from its metadata and spec at `path`."""
    notes: list[Note] = []
    containers = [
        read_container(raw, INIT, (*path, "initContainers", i), notes)
        for i, raw in enumerate(as_list(spec.get("initContainers")))
    ] + [
        read_container(raw, APP, (*path, "containers", i), notes)
        for i, raw in enumerate(as_list(spec.get("containers")))
    ]
    qos = str(as_mapping(status).get("qosClass") or "") or qos_class(containers)
    return Pod(
        name=str(metadata.get("name") or metadata.get("generateName") or "pod"),
        namespace=str(metadata.get("namespace") or "default"),
        uid=str(metadata["uid"]) if metadata.get("uid") else None,
        qos=qos,
        containers=tuple(containers),
        pod_level_resources=spec.get("resources") is not None,
        notes=tuple(notes),
    )


# --- the kubelet's counts -------------------------------------------------------------------


def exclusive_cpus(pod: Pod, container: Container) -> int:
    """The CPU manager's `guaranteedCPUs`: whole CPUs of a Guaranteed pod's container, else 0."""
    if pod.qos != GUARANTEED or pod.pod_level_resources:
        return 0
    cpu = container.requests.get("cpu", Fraction(0))
    return int(cpu) if cpu.denominator == 1 else 0


def memory_requests(pod: Pod, container: Container) -> dict[str, int]:
    """The memory manager's requests of a Guaranteed pod's container: memory and hugepages, bytes."""
    if pod.qos != GUARANTEED or pod.pod_level_resources:
        return {}
    return {
        name: whole(quantity)
        for name, quantity in container.requests.items()
        if name == "memory" or is_hugepages(name)
    }


def device_requests(container: Container) -> dict[str, int]:
    """The device manager's requests: extended resources, from the limits."""
    return {name: whole(q) for name, q in container.limits.items() if is_device(name) and q > 0}


def pod_total(pod: Pod, per_container: Any) -> dict[str, int]:
    """The pod's need of each resource, `per_container(container) -> {name: amount}` summed the
    way the kubelet sums them: max(init peak, app containers + sidecars)."""
    init_peak: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    for container in pod.init_containers:
        for name, amount in per_container(container).items():
            if container.kind == SIDECAR:
                sidecars[name] = sidecars.get(name, 0) + amount
            else:
                init_peak[name] = max(init_peak.get(name, 0), sidecars.get(name, 0) + amount)
    apps: dict[str, int] = {}
    for container in pod.app_containers:
        for name, amount in per_container(container).items():
            apps[name] = apps.get(name, 0) + amount
    names = set(init_peak) | set(sidecars) | set(apps)
    return {
        n: max(init_peak.get(n, 0), apps.get(n, 0) + sidecars.get(n, 0))
        for n in sorted(names)
        if max(init_peak.get(n, 0), apps.get(n, 0) + sidecars.get(n, 0)) > 0
    }
