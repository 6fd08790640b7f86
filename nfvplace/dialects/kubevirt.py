"""KubeVirt VirtualMachineInstances (and the template of a VirtualMachine) as VM Descriptors.

- `domain.cpu`: `sockets * cores * threads` vCPUs (one, or the CPU request rounded up, when no
  topology is given); `dedicatedCpuPlacement` makes them one pinned cpu-set (threads 2: each
  core's two threads a `howtogroup` pair); `isolateEmulatorThread` is `emulator_threads: isolate`
  (KubeVirt adds one pinned CPU for it, as nfvplace does); `realtime` marks the vCPUs of its mask;
  `features` required or forced are required flags.
- `domain.memory`: `guest` (or the memory request) is the VM's memory, `hugepages.pageSize` backs
  all of it with pages of that size.
- `devices.interfaces` with `sriov: {}` are SR-IOV interfaces on the Multus network they name
  (the device plugin's resource name is in that network's NetworkAttachmentDefinition, which the
  VMI does not hold); `devices.gpus` and `devices.hostDevices` are PCI device requests of model
  `deviceName`. With dedicated CPUs they sit on the cpu-set's NUMA node.
- `numa.guestMappingPassthrough` mirrors the host NUMA nodes the kubelet picks into the guest; a
  VM Descriptor cannot say "split as the host decides", so the VM is read as one cpu-set.

The scheduler schedules the VMI's virt-launcher pod, whose requests KubeVirt computes (guest memory
plus its overhead); the Kubernetes extender reads that pod.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import (
    ASSUMED,
    MISSING,
    Conversion,
    DialectError,
    Note,
    as_list,
    as_mapping,
    identifier,
    parse_count,
    parse_cpu_list,
)
from .k8s_nrt import VF_POOLS_ANNOTATION, vf_pools
from .kubernetes import api_group, parse_quantity, whole

NAME = "kubevirt-vmi"
GROUP = "kubevirt.io"
MIB = 2**20
SCHEDULER_FIELDS = ("nodeSelector", "affinity", "tolerations", "topologySpreadConstraints")


def _spec_path(data: Mapping[str, Any]) -> PathKey | None:
    if api_group(data) != GROUP:
        return None
    if data.get("kind") == "VirtualMachineInstance":
        return ("spec",)
    if data.get("kind") == "VirtualMachine":
        return ("spec", "template", "spec")
    return None


def detect(data: Mapping[str, Any]) -> bool:
    path = _spec_path(data)
    return path is not None and isinstance(_at(data, (*path, "domain")), Mapping)


def _at(data: Any, path: PathKey) -> Any:
    for key in path:
        data = as_mapping(data).get(str(key))
    return data


def convert(data: Mapping[str, Any]) -> Conversion:
    path = _spec_path(data)
    if path is None:
        raise DialectError("not a KubeVirt VirtualMachineInstance or VirtualMachine")
    spec = as_mapping(_at(data, path))
    domain_path: PathKey = (*path, "domain")
    domain = as_mapping(spec.get("domain"))
    notes: list[Note] = []
    name = _at(data, ("metadata", "name")) or _at(data, ("spec", "template", "metadata", "name"))
    vm: dict[str, Any] = {"schema": "nfvplace/vmd/v1", "name": identifier(name, "vmi")}
    cpu = as_mapping(domain.get("cpu"))
    vcpus = _vcpus(domain, domain_path, notes)
    memory_mib = _memory_mib(domain, domain_path, notes)
    interfaces = _interfaces(spec, path, notes)
    speeds = _speeds(data, path)
    for interface in interfaces:
        if speeds.get(interface.get("physical_network", "")):
            interface["speed_gbps"] = speeds[interface["physical_network"]]
    devices = _devices(domain, domain_path)
    dedicated = bool(cpu.get("dedicatedCpuPlacement"))
    if dedicated:
        cpu_set = _cpu_set(domain, domain_path, vcpus, memory_mib, interfaces, notes)
        vm["cpu_sets"] = [cpu_set]
        vm["pci_devices"] = [{**d, "cpu_set": 0} for d in devices]
        if cpu.get("isolateEmulatorThread"):
            vm["emulator_threads"] = "isolate"
    else:
        vm.update(vcpus=vcpus, memory_mib=memory_mib, cpu_oversubscription=True)
        vm.update(interfaces=interfaces, pci_devices=devices)
        for key in ("isolateEmulatorThread", "numa"):
            if cpu.get(key):
                notes.append(
                    Note(
                        (*domain_path, "cpu", key),
                        f"{key} applies to dedicated CPUs only (KubeVirt ignores it): not carried",
                    )
                )
        if as_mapping(domain.get("memory")).get("hugepages"):
            notes.append(
                Note(
                    (*domain_path, "memory", "hugepages"),
                    "hugepages without dedicated CPUs are not placed per NUMA node: not carried",
                )
            )
    _cpu_extras(vm, cpu, (*domain_path, "cpu"), vcpus, notes)
    for key in SCHEDULER_FIELDS:
        if spec.get(key) is not None:
            notes.append(Note((*path, key), f"{key} is for the Kubernetes scheduler: not carried"))
    notes.append(
        Note(
            domain_path,
            "the virt-launcher pod also asks for KubeVirt's memory overhead, not counted here "
            "(the Kubernetes extender reads the pod, overhead included)",
            ASSUMED,
        )
    )
    return Conversion(NAME, vm, {(): path}, tuple(notes))


def _speeds(data: Mapping[str, Any], path: PathKey) -> dict[str, float]:
    """Port speeds by Multus network, from the `nfvplace.io/vf-pools` annotation."""
    for where in (("metadata",), (*path[:-1], "metadata")):
        text = as_mapping(as_mapping(_at(data, where)).get("annotations")).get(VF_POOLS_ANNOTATION)
        if text is not None:
            return vf_pools(text, (*where, "annotations", VF_POOLS_ANNOTATION))
    return {}


def _vcpus(domain: Mapping[str, Any], path: PathKey, notes: list[Note]) -> int:
    cpu = as_mapping(domain.get("cpu"))
    if any(key in cpu for key in ("cores", "sockets", "threads")):
        count = 1
        for key in ("sockets", "cores", "threads"):
            count *= parse_count(cpu.get(key, 1) or 1, key, (*path, "cpu", key))
        if not 1 <= count <= 4096:
            raise DialectError(f"{count} vCPUs: give between 1 and 4096", (*path, "cpu"))
        return count
    resources = as_mapping(domain.get("resources"))
    for key in ("requests", "limits"):
        value = as_mapping(resources.get(key)).get("cpu")
        if value is not None:
            where = (*path, "resources", key, "cpu")
            count = max(whole(parse_quantity(value, "cpu", where)), 1)
            notes.append(
                Note(where, f"no CPU topology: {count} vCPU(s) from the CPU {key}", ASSUMED)
            )
            return count
    notes.append(Note((*path, "cpu"), "no CPU topology or request: one vCPU, as KubeVirt", ASSUMED))
    return 1


def _memory_mib(domain: Mapping[str, Any], path: PathKey, notes: list[Note]) -> int:
    memory = as_mapping(domain.get("memory"))
    if memory.get("guest") is not None:
        where: PathKey = (*path, "memory", "guest")
        return whole(parse_quantity(memory["guest"], "guest memory", where) / MIB)
    resources = as_mapping(domain.get("resources"))
    for key in ("requests", "limits"):
        value = as_mapping(resources.get(key)).get("memory")
        if value is not None:
            where = (*path, "resources", key, "memory")
            return whole(parse_quantity(value, "memory", where) / MIB)
    notes.append(Note((*path, "memory"), "the guest's memory is not given", MISSING))
    return 0


def _cpu_set(
    domain: Mapping[str, Any],
    path: PathKey,
    vcpus: int,
    memory_mib: int,
    interfaces: list[dict[str, Any]],
    notes: list[Note],
) -> dict[str, Any]:
    cpu = as_mapping(domain.get("cpu"))
    cpu_set: dict[str, Any] = {
        "id": 0,
        "vcpus": list(range(vcpus)),
        "memory_mib": memory_mib,
        "interfaces": interfaces,
    }
    threads = parse_count(cpu.get("threads", 1) or 1, "threads", (*path, "cpu", "threads"))
    if threads == 2:
        cpu_set["howtogroup"] = [[v, v + 1] for v in range(0, vcpus, 2)]
    elif threads > 2:
        notes.append(
            Note((*path, "cpu", "threads"), f"{threads} threads per core: only pairs are said")
        )
    page = as_mapping(as_mapping(domain.get("memory")).get("hugepages")).get("pageSize")
    if page is not None:
        size = whole(parse_quantity(page, "pageSize", (*path, "memory", "hugepages", "pageSize")))
        cpu_set["hugepages"] = {"size": f"{size // 1024}KiB", "count": memory_mib * MIB // size}
    if as_mapping(cpu.get("numa")).get("guestMappingPassthrough") is not None:
        notes.append(
            Note(
                (*path, "cpu", "numa", "guestMappingPassthrough"),
                "the guest mirrors the host NUMA nodes the kubelet picks; read as one cpu-set "
                "(one host NUMA node)",
                ASSUMED,
            )
        )
    return cpu_set


def _interfaces(spec: Mapping[str, Any], path: PathKey, notes: list[Note]) -> list[dict[str, Any]]:
    networks = {
        str(as_mapping(n).get("name")): as_mapping(as_mapping(n).get("multus")).get("networkName")
        for n in as_list(spec.get("networks"))
    }
    out = []
    raw_list = as_list(_at(spec, ("domain", "devices", "interfaces")))
    for index, raw in enumerate(raw_list):
        interface = as_mapping(raw)
        if "sriov" not in interface:
            continue
        name = str(interface.get("name", f"sriov-{index}"))
        entry: dict[str, Any] = {"name": identifier(name, "sriov"), "mode": "sriov"}
        network = networks.get(name)
        where = (*path, "domain", "devices", "interfaces", index)
        if network:
            entry["physical_network"] = str(network)
            notes.append(
                Note(
                    where,
                    f"SR-IOV interface on Multus network {network!r}: the VF pool is the "
                    "resource its NetworkAttachmentDefinition names",
                    ASSUMED,
                )
            )
        out.append(entry)
    return out


def _devices(domain: Mapping[str, Any], path: PathKey) -> list[dict[str, Any]]:
    devices = []
    for key, device_class in (("gpus", "gpu"), ("hostDevices", "other")):
        for index, raw in enumerate(as_list(_at(domain, ("devices", key)))):
            model = as_mapping(raw).get("deviceName")
            if not model:
                raise DialectError(
                    f"{key} entry without deviceName", (*path, "devices", key, index)
                )
            devices.append({"class": device_class, "count": 1, "model": str(model)})
    return devices


def _cpu_extras(
    vm: dict[str, Any], cpu: Mapping[str, Any], path: PathKey, vcpus: int, notes: list[Note]
) -> None:
    flags = [
        str(as_mapping(f).get("name"))
        for f in as_list(cpu.get("features"))
        if as_mapping(f).get("policy", "require") in ("require", "force")
    ]
    if flags:
        vm["processor"] = {"required_flags": flags}
    for index, raw in enumerate(as_list(cpu.get("features"))):
        if as_mapping(raw).get("policy", "require") not in ("require", "force"):
            notes.append(Note((*path, "features", index), "a feature not required: not carried"))
    if cpu.get("model"):
        notes.append(Note((*path, "model"), f"CPU model {cpu['model']!r} not carried"))
    realtime = cpu.get("realtime")
    if realtime is not None:
        mask = as_mapping(realtime).get("mask")
        chosen = parse_cpu_list(mask, "realtime mask", (*path, "realtime", "mask")) if mask else []
        vm["realtime_vcpus"] = [v for v in chosen if v < vcpus] if mask else list(range(vcpus))
    if cpu.get("maxSockets"):
        notes.append(Note((*path, "maxSockets"), "CPU hotplug (maxSockets) not carried"))
