"""A VM Descriptor written back out in a dialect: Nova flavor extra specs, OSM guest-epa, SOL006
(with OSM's EPA augment, `osm_writer`) and OpenVIM `numas`; a VNF template as an OSM or SOL006
VNFD with one VDU per member.

Each writer returns the dialect document and a note for every part of the VM the dialect cannot
say (its path in the VM Descriptor). Reading what a writer wrote gives the same VM Descriptor for
what the dialect can say (the round-trip tests check it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..models.vmd import Interface, VmDescriptor
from ..models.vnf import VnfTemplate
from .base import Note
from .openstack import TRAIT_FLAGS
from .osm_writer import to_osm, to_osm_vnf, to_sol006, to_sol006_vnf
from .vm_parts import not_said, page_kib, vm_size

Writer = Callable[[VmDescriptor], tuple[dict[str, Any], list[Note]]]
VnfWriter = Callable[[VnfTemplate], tuple[dict[str, Any], list[Note]]]
TARGETS = ("nova", "osm", "sol006", "openvim")
FLAG_TRAITS = {flag: trait for trait, flag in TRAIT_FLAGS.items()}
OPENVIM_MODES = {"dedicated": "yes", "sriov": "yes:sriov"}


def to_nova(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    vcpus, memory = vm_size(vm)
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
        if page_kib(vm):
            specs["hw:mem_page_size"] = str(page_kib(vm))
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
    notes = not_said(vm, "a Nova flavor", said)
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
    notes = not_said(vm, "an OpenVIM flavor", said)
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
        out.update({"vcpus": vm_size(vm)[0], "ram": vm_size(vm)[1], "extended": {"numas": []}})
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


WRITERS: dict[str, Writer] = {
    "nova": to_nova,
    "osm": to_osm,
    "sol006": to_sol006,
    "openvim": to_openvim,
}
VNF_WRITERS: dict[str, VnfWriter] = {"osm": to_osm_vnf, "sol006": to_sol006_vnf}
"""The targets that write a VNF template of several VMs (one VDU per member)."""
