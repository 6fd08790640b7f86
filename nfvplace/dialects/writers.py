"""A VM Descriptor written back out in a dialect: Nova flavor extra specs, OSM guest-epa, SOL006
(with OSM's EPA augment) and OpenVIM `numas`.

Each writer returns the dialect document and a note for every part of the VM the dialect cannot
say (its path in the VM Descriptor). Reading what a writer wrote gives the same VM Descriptor for
what the dialect can say (the round-trip tests check it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..models.vmd import Interface, VmDescriptor
from .base import DROPPED, Note
from .openstack import TRAIT_FLAGS

Writer = Callable[[VmDescriptor], tuple[dict[str, Any], list[Note]]]
TARGETS = ("nova", "osm", "sol006", "openvim")
FLAG_TRAITS = {flag: trait for trait, flag in TRAIT_FLAGS.items()}
OSM_MODES = {"sriov": "SR-IOV", "dedicated": "PCI-PASSTHROUGH", "vswitch": "PARAVIRT"}
OPENVIM_MODES = {"dedicated": "yes", "sriov": "yes:sriov"}


def _not_said(vm: VmDescriptor, target: str, said: set[str]) -> list[Note]:
    """A note for every field the VM sets that `target` has no word for."""
    data = vm.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return [
        Note((key,), f"'{key}' is not carried: {target} has no equivalent", DROPPED)
        for key in data
        if key not in said and key not in ("schema", "name", "description")
    ]


def _size(vm: VmDescriptor) -> tuple[int, int]:
    vcpus = vm.vcpus or sum(len(cs.vcpus) for cs in vm.cpu_sets)
    memory = vm.memory_mib or sum(cs.memory_mib for cs in vm.cpu_sets)
    return vcpus, memory


def _page_kib(vm: VmDescriptor) -> int | None:
    pages = {cs.hugepages.size_kib for cs in vm.cpu_sets if cs.hugepages is not None}
    return pages.pop() if len(pages) == 1 else None


def to_nova(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    vcpus, memory = _size(vm)
    specs: dict[str, str] = {}
    said = {"vcpus", "memory_mib", "cpu_oversubscription", "storage", "emulator_threads"}
    if vm.cpu_sets:
        said |= {"cpu_sets", "cpu_thread_policy", "hypervisor", "realtime_vcpus"}
        specs["hw:cpu_policy"] = "dedicated"
        specs["hw:cpu_thread_policy"] = vm.cpu_thread_policy.value
        specs["hw:numa_nodes"] = str(len(vm.cpu_sets))
        for index, cs in enumerate(vm.cpu_sets):
            specs[f"hw:numa_cpus.{index}"] = ",".join(str(v) for v in cs.vcpus)
            specs[f"hw:numa_mem.{index}"] = str(cs.memory_mib)
        if _page_kib(vm):
            specs["hw:mem_page_size"] = str(_page_kib(vm))
    if vm.emulator_threads.value == "isolate":
        specs["hw:emulator_threads_policy"] = "isolate"
    if vm.realtime_vcpus:
        specs["hw:cpu_realtime"] = "yes"
        others = [v for v in range(vcpus) if v not in vm.realtime_vcpus]
        if others:
            specs["hw:cpu_realtime_mask"] = "^" + ",".join(str(v) for v in others)
    if vm.processor is not None and vm.processor.required_flags:
        said.add("processor")
        for flag in vm.processor.required_flags:
            trait = FLAG_TRAITS.get(flag, flag.upper())
            specs[f"trait:HW_CPU_X86_{trait}"] = "required"
    flavor: dict[str, Any] = {"name": vm.name, "vcpus": vcpus, "ram": memory}
    root = next((d for d in vm.storage if d.name == "root"), None)
    if root is not None:
        flavor["disk"] = root.size_gib
    flavor["extra_specs"] = specs
    notes = _not_said(vm, "a Nova flavor", said)
    for index, cs in enumerate(vm.cpu_sets):
        if cs.interfaces:
            notes.append(
                Note(
                    ("cpu_sets", index, "interfaces"),
                    "not carried: interfaces are Neutron ports (vnic_type direct or "
                    "direct-physical), not part of a Nova flavor",
                )
            )
        if cs.thread_policy is not None and cs.thread_policy != vm.cpu_thread_policy:
            notes.append(
                Note(
                    ("cpu_sets", index, "thread_policy"),
                    "not carried: a Nova flavor has one thread policy for all its vCPUs",
                )
            )
        if cs.howtogroup and vm.cpu_thread_policy.value != "require":
            notes.append(
                Note(
                    ("cpu_sets", index, "howtogroup"),
                    "not carried: Nova pairs vCPUs on sibling threads only with thread policy "
                    "require",
                )
            )
    return {"flavor": flavor}, notes


def to_openvim(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    said = {"cpu_sets", "hypervisor", "interfaces", "cpu_thread_policy"}
    notes = _not_said(vm, "an OpenVIM flavor", said)
    numas = []
    for index, cs in enumerate(vm.cpu_sets):
        numa: dict[str, Any] = {}
        if cs.howtogroup:
            numa["paired-threads"] = len(cs.howtogroup)
            numa["paired-threads-id"] = [list(pair) for pair in cs.howtogroup]
        singles = [v for v in cs.vcpus if v not in {x for p in cs.howtogroup for x in p}]
        if singles:
            key = "threads" if cs.thread_policy is not None else "cores"
            numa[key] = len(singles)
        if cs.hugepages is None or cs.hugepages.size_kib != 1024 * 1024:
            notes.append(
                Note(("cpu_sets", index), "OpenVIM memory is in 1 GiB pages; written as such")
            )
        numa["memory"] = cs.memory_mib // 1024
        interfaces = [_openvim_interface(i) for i in cs.interfaces]
        if interfaces:
            numa["interfaces"] = interfaces
        numas.append(numa)
    out: dict[str, Any] = {"name": vm.name}
    if numas:
        out["extended"] = {"numas": numas}
    else:
        out.update({"vcpus": _size(vm)[0], "ram": _size(vm)[1], "extended": {"numas": []}})
    bridges = [
        {"name": i.name, **({"bandwidth": f"{i.bandwidth_gbps} Gbps"} if i.bandwidth_gbps else {})}
        for i in vm.interfaces
    ]
    if bridges:
        out["bridge-ifaces"] = bridges
    return out, notes


def _openvim_interface(interface: Interface) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": interface.name,
        "dedicated": OPENVIM_MODES.get(interface.mode.value, "no"),
    }
    if interface.bandwidth_gbps:
        out["bandwidth"] = f"{interface.bandwidth_gbps} Gbps"
    return out


def _osm_numa(vm: VmDescriptor) -> dict[str, Any]:
    nodes = []
    for cs in vm.cpu_sets:
        node: dict[str, Any] = {
            "id": cs.id,
            "memory-mb": cs.memory_mib,
            "vcpu": [{"id": v} for v in cs.vcpus],
        }
        if cs.howtogroup:
            pairs = [{"thread-a": a, "thread-b": b} for a, b in cs.howtogroup]
            node["paired-threads"] = {
                "num-paired-threads": len(pairs),
                "paired-thread-ids": pairs,
            }
        nodes.append(node)
    return {"node-cnt": len(nodes), "mem-policy": "STRICT", "node": nodes}


def _osm_epa(vm: VmDescriptor) -> dict[str, Any]:
    if not vm.cpu_sets:
        return {"cpu-pinning-policy": "SHARED" if vm.cpu_oversubscription else "ANY"}
    epa: dict[str, Any] = {
        "cpu-pinning-policy": "DEDICATED",
        "cpu-thread-pinning-policy": vm.cpu_thread_policy.value.upper(),
        "numa-node-policy": _osm_numa(vm),
    }
    page = _page_kib(vm)
    if page:
        epa["mempage-size"] = {2048: "SIZE_2MB", 1024 * 1024: "SIZE_1GB"}.get(page, "LARGE")
    return epa


def _osm_interfaces(vm: VmDescriptor) -> list[dict[str, Any]]:
    placed = [i for cs in vm.cpu_sets for i in cs.interfaces] + list(vm.interfaces)
    return [
        {
            "name": i.name,
            "type": "EXTERNAL",
            "virtual-interface": {
                "type": OSM_MODES[i.mode.value],
                **({"bandwidth": f"{i.bandwidth_gbps}Gbps"} if i.bandwidth_gbps else {}),
            },
        }
        for i in placed
    ]


OSM_SAID = {"cpu_sets", "hypervisor", "interfaces", "cpu_thread_policy", "cpu_oversubscription"}


def to_osm(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    vcpus, memory = _size(vm)
    vdu: dict[str, Any] = {
        "id": vm.name,
        "vm-flavor": {"vcpu-count": vcpus, "memory-mb": memory},
        "guest-epa": _osm_epa(vm),
    }
    interfaces = _osm_interfaces(vm)
    if interfaces:
        vdu["interface"] = interfaces
    if vm.hypervisor is not None and str(vm.hypervisor.type) == "kvm":
        vdu["hypervisor-epa"] = {"type": "REQUIRE_KVM"}
    notes = _not_said(vm, "OSM guest-epa", OSM_SAID | {"vcpus", "memory_mib"})
    return {"vnfd-catalog": {"vnfd": [{"id": vm.name, "vdu": [vdu]}]}}, notes


def to_sol006(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    vcpus, memory = _size(vm)
    epa = _osm_epa(vm)
    cpu: dict[str, Any] = {"num-virtual-cpu": vcpus}
    mem: dict[str, Any] = {"size": memory / 1024}
    if vm.cpu_sets:
        cpu["pinning"] = {"policy": "static", "thread-policy": epa["cpu-thread-pinning-policy"]}
        mem["numa-node-policy"] = epa["numa-node-policy"]
        if "mempage-size" in epa:
            mem["mempage-size"] = epa["mempage-size"]
    else:
        cpu["pinning"] = {"policy": "dynamic"}
    vdu: dict[str, Any] = {"id": vm.name, "virtual-compute-desc": f"{vm.name}-compute"}
    interfaces = _osm_interfaces(vm)
    if interfaces:
        vdu["interface"] = interfaces
    vnfd = {
        "id": vm.name,
        "vdu": [vdu],
        "virtual-compute-desc": [
            {"id": f"{vm.name}-compute", "virtual-cpu": cpu, "virtual-memory": mem}
        ],
    }
    notes = _not_said(vm, "SOL006 (with OSM's EPA augment)", OSM_SAID | {"vcpus", "memory_mib"})
    return {"etsi-nfv-vnfd:vnfd": vnfd}, notes


WRITERS: dict[str, Writer] = {
    "nova": to_nova,
    "osm": to_osm,
    "sol006": to_sol006,
    "openvim": to_openvim,
}
