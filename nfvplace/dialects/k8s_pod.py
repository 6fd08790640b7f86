"""Kubernetes Pods (and the pod template of a Deployment, StatefulSet, DaemonSet, ReplicaSet or Job)
as VM Descriptors, read the way the kubelet's resource managers read them.

- A Guaranteed pod's container with whole CPUs (the CPU manager's exclusive CPUs) is one pinned
  cpu-set: its CPUs, its memory plus hugepages (`memory_mib`, `hugepages`) and the device plugin
  resources it asks for (SR-IOV VF pools as `sriov` interfaces on the pool's network, other
  devices as PCI device requests of that model). Cpu-sets may share a NUMA node: that is the
  Topology Manager's default `container` scope, where each container is aligned on its own.
- A pod without exclusive CPUs is a plain VM: its CPU requests (rounded up) as shared vCPUs and
  its memory, with its devices anywhere on the host.
- Init containers run before the app containers and their resources are reused by them; the
  pod's total follows the kubelet (see `nfvplace.dialects.kubernetes`), which is what the
  Kubernetes extender decides by. The VM Descriptor holds the containers that run together.

Which device resources are VF pools: the pod's `nfvplace.io/vf-pools` annotation when given, else
every resource whose name says `sriov` or `vf` (the NodeResourceTopology reader's rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..models.loading import PathKey
from .base import ASSUMED, MISSING, Conversion, DialectError, Note, as_mapping, identifier
from .k8s_nrt import VF_POOLS_ANNOTATION, is_vf_pool, vf_pools
from .kubernetes import (
    GUARANTEED,
    Container,
    Pod,
    api_group,
    device_requests,
    exclusive_cpus,
    is_hugepages,
    memory_requests,
    page_size_bytes,
    pod_total,
    read_pod_spec,
    whole,
)

NAME = "kubernetes-pod"
WORKLOADS = {
    ("", "Pod"): (),
    ("apps", "Deployment"): ("spec", "template"),
    ("apps", "StatefulSet"): ("spec", "template"),
    ("apps", "DaemonSet"): ("spec", "template"),
    ("apps", "ReplicaSet"): ("spec", "template"),
    ("batch", "Job"): ("spec", "template"),
}
MIB = 2**20
SCHEDULER_FIELDS = (
    "nodeName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "priorityClassName",
    "runtimeClassName",
    "overhead",
    "resources",
    "resourceClaims",
)
"""Pod spec fields that bear on placement and that the Kubernetes scheduler (or the kubelet's
admission) handles; a VM Descriptor has nothing to say them with."""


def _template(data: Mapping[str, Any]) -> PathKey | None:
    return WORKLOADS.get((api_group(data), str(data.get("kind"))))


def detect(data: Mapping[str, Any]) -> bool:
    prefix = _template(data)
    if prefix is None:
        return False
    spec = as_mapping(_at(data, (*prefix, "spec")))
    return isinstance(spec.get("containers"), list)


def _at(data: Any, path: PathKey) -> Any:
    for key in path:
        data = as_mapping(data).get(str(key))
    return data


def read_pod(data: Mapping[str, Any]) -> tuple[Pod, PathKey]:
    """The pod a document describes, and the path of its pod spec's parent."""
    prefix = _template(data)
    if prefix is None:
        raise DialectError("not a Pod or a workload with a pod template")
    template = as_mapping(_at(data, prefix)) if prefix else data
    metadata = {**as_mapping(data.get("metadata")), **as_mapping(template.get("metadata"))}
    spec = as_mapping(template.get("spec"))
    return read_pod_spec(metadata, spec, template.get("status"), (*prefix, "spec")), prefix


def convert(data: Mapping[str, Any]) -> Conversion:
    pod, prefix = read_pod(data)
    notes = list(pod.notes)
    spec_path: PathKey = (*prefix, "spec")
    spec = as_mapping(_at(data, spec_path))
    for key in SCHEDULER_FIELDS:
        if spec.get(key) is not None:
            notes.append(
                Note(
                    (*spec_path, key),
                    f"{key} is for the Kubernetes scheduler and kubelet: not carried",
                )
            )
    pools = _pools(data, prefix)
    vm = vm_of(pod, pools, notes)
    return Conversion(NAME, vm, {(): spec_path}, tuple(notes))


def _pools(data: Mapping[str, Any], prefix: PathKey) -> dict[str, float] | None:
    """The `nfvplace.io/vf-pools` annotation of the pod (or its template): pool -> port speed."""
    for path in ((*prefix, "metadata"), ("metadata",)):
        text = as_mapping(as_mapping(_at(data, path)).get("annotations")).get(VF_POOLS_ANNOTATION)
        if text is not None:
            return vf_pools(text, (*path, "annotations", VF_POOLS_ANNOTATION))
    return None


def vm_of(
    pod: Pod,
    pools: Mapping[str, float] | None,
    notes: list[Note],
    *,
    pod_scope: bool = False,
    memory: bool = True,
) -> dict[str, Any]:
    """The VM Descriptor (plain data) of the containers that run together: one cpu-set per pinned
    container, or (`pod_scope`, the Topology Manager's pod scope) one for the pod's totals as the
    kubelet counts them. Without `memory` (a node whose memory manager does not pin memory) the
    cpu-sets carry no memory or hugepages."""
    vm: dict[str, Any] = {"schema": "nfvplace/vmd/v1", "name": identifier(pod.name, "pod")}
    running = [c for c in pod.containers if c.kind != "init"]
    if pod_scope and any(exclusive_cpus(pod, c) for c in running):
        running = [_pod_totals(pod)]
    for container in pod.init_containers:
        if container.kind == "init" and (container.requests or container.limits):
            notes.append(
                Note(
                    container.path,
                    f"init container {container.name!r} runs before the others and its resources "
                    "are reused by them: counted in the pod's total as the kubelet counts it, not "
                    "as a cpu-set",
                    ASSUMED,
                )
            )
    if pod.pod_level_resources:
        notes.append(
            Note(
                (),
                "pod-level resources: the kubelet's CPU and memory managers do not pin such pods",
                ASSUMED,
            )
        )
    pinned = [c for c in running if exclusive_cpus(pod, c)]
    if pinned:
        _pinned(vm, pod, running, pinned, pools, notes)
    else:
        _shared(vm, pod, running, pools, notes)
    if not memory:
        for cpu_set in vm.get("cpu_sets", ()):
            cpu_set["memory_mib"] = 0
            cpu_set.pop("hugepages", None)
    return vm


def _pod_totals(pod: Pod) -> Container:
    """One container holding the pod's totals (exclusive CPUs, memory, hugepages, devices)."""
    cpus = pod_total(pod, lambda c: {"cpu": exclusive_cpus(pod, c)})
    memory = pod_total(pod, lambda c: memory_requests(pod, c))
    devices = pod_total(pod, device_requests)
    requests = {name: Fraction(amount) for name, amount in {**cpus, **memory}.items()}
    limits = {name: Fraction(amount) for name, amount in devices.items()}
    return Container(pod.name, "app", {**requests, **limits}, {**requests, **limits})


def _device_demands(
    container: Container, pools: Mapping[str, float] | None, cpu_set: int | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    interfaces, devices = [], []
    for name, count in device_requests(container).items():
        if is_vf_pool(name, pools):
            short = identifier(name.split("/", 1)[-1], "vf")
            speed = {"speed_gbps": pools[name]} if pools and pools.get(name) else {}
            interfaces += [
                {
                    "name": f"{identifier(container.name, 'c')}-{short}-{k}"[:253],
                    "mode": "sriov",
                    "physical_network": name,
                }
                | speed
                for k in range(count)
            ]
        else:
            device: dict[str, Any] = {"class": "other", "count": count, "model": name}
            if "gpu" in name.lower():
                device["class"] = "gpu"
            if cpu_set is not None:
                device["cpu_set"] = cpu_set
            devices.append(device)
    return interfaces, devices


def _memory(container: Container, notes: list[Note]) -> tuple[int, dict[str, Any] | None]:
    """(memory in MiB with hugepages, the hugepages) of a container."""
    memory = whole(container.requests.get("memory", Fraction(0)) / MIB)
    pages = [
        (name, quantity) for name, quantity in container.requests.items() if is_hugepages(name)
    ]
    hugepages = None
    for index, (name, quantity) in enumerate(sorted(pages)):
        size = page_size_bytes(name, (*container.path, "resources", "requests", name))
        if index:
            notes.append(
                Note(
                    (*container.path, "resources", "requests", name),
                    "a cpu-set has one hugepage size: this second size is not carried",
                )
            )
            continue
        hugepages = {"size": f"{size // 1024}KiB", "count": whole(quantity / size)}
        memory += whole(quantity / MIB)
    return memory, hugepages


def _pinned(
    vm: dict[str, Any],
    pod: Pod,
    running: list[Container],
    pinned: list[Container],
    pools: Mapping[str, float] | None,
    notes: list[Note],
) -> None:
    cpu_sets, devices, first = [], [], 0
    for index, container in enumerate(pinned):
        count = exclusive_cpus(pod, container)
        memory, hugepages = _memory(container, notes)
        interfaces, wanted = _device_demands(container, pools, index)
        cpu_set: dict[str, Any] = {
            "id": index,
            "vcpus": list(range(first, first + count)),
            "memory_mib": memory,
            "interfaces": interfaces,
        }
        if hugepages is not None:
            cpu_set["hugepages"] = hugepages
        cpu_sets.append(cpu_set)
        devices += wanted
        first += count
    for container in running:
        if container not in pinned:
            notes.append(
                Note(
                    (*container.path, "resources"),
                    f"container {container.name!r} runs on the shared CPUs (no whole CPUs of a "
                    "Guaranteed pod): its CPU, memory and devices are not carried",
                )
            )
    vm.update(
        cpu_sets=cpu_sets,
        cpu_sets_may_share_node=True,
        cpu_thread_policy="prefer",
        pci_devices=devices,
    )
    notes.append(
        Note(
            (),
            "each container with whole CPUs is a cpu-set; they may share a NUMA node (the "
            "kubelet's container scope) and a core's other thread may go to another pod "
            "(thread policy prefer, the CPU manager's default)",
            ASSUMED,
        )
    )


def _shared(
    vm: dict[str, Any],
    pod: Pod,
    running: list[Container],
    pools: Mapping[str, float] | None,
    notes: list[Note],
) -> None:
    cpu = sum((c.requests.get("cpu", Fraction(0)) for c in running), Fraction(0))
    memory = sum((c.requests.get("memory", Fraction(0)) for c in running), Fraction(0))
    interfaces, devices = [], []
    for container in running:
        more, wanted = _device_demands(container, pools, None)
        interfaces += more
        devices += wanted
        if any(is_hugepages(name) for name in container.requests):
            notes.append(
                Note(
                    (*container.path, "resources"),
                    "hugepages outside a Guaranteed pod's pinned container are not placed per "
                    "NUMA node: not carried",
                )
            )
    if memory == 0:
        notes.append(Note((), "the pod requests no memory: give the VM's size", MISSING))
    vm.update(
        vcpus=max(whole(cpu), 1),
        memory_mib=whole(memory / MIB),
        cpu_oversubscription=True,
        interfaces=interfaces,
        pci_devices=devices,
    )
    reason = "not Guaranteed" if pod.qos != GUARANTEED else "no container asks for whole CPUs"
    notes.append(
        Note(
            (),
            f"the pod is {pod.qos} ({reason}): its {float(cpu):g} CPUs run on the shared pool, "
            f"read as {max(whole(cpu), 1)} shared vCPUs",
            ASSUMED,
        )
    )
