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

from ..models.capabilities import CAPABILITY_SETS, CapabilitySet
from ..models.vmd import Interface, VmDescriptor
from ..models.vnf import VnfTemplate
from .base import DROPPED, Note, as_mapping
from .openstack import TRAIT_FLAGS
from .osm_writer import to_osm, to_osm_vnf, to_sol006, to_sol006_vnf
from .vm_parts import (
    interface_affinity_notes,
    not_said,
    one_page_size,
    one_thread_policy,
    page_of,
    vm_size,
)

Writer = Callable[[VmDescriptor], tuple[dict[str, Any], list[Note]]]
VnfWriter = Callable[[VnfTemplate], tuple[dict[str, Any], list[Note]]]
TARGETS = ("nova", "osm", "sol006", "openvim")
FLAG_TRAITS = {flag: trait for trait, flag in TRAIT_FLAGS.items()}
OPENVIM_MODES = {"dedicated": "yes", "sriov": "yes:sriov"}


def _nova_thread_policy(vm: VmDescriptor) -> str:
    """`require` when every vCPU is in a sibling pair (OpenVIM `paired-threads`): read back, it
    pairs them again, where `isolate` would give each vCPU a whole core of its own."""
    if all(cs.vcpus and not cs.single_vcpus for cs in vm.cpu_sets):
        return "require"
    return vm.cpu_thread_policy.value


def to_nova(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    vcpus, memory = vm_size(vm)
    specs: dict[str, str] = {}
    said = {"vcpus", "memory_mib", "cpu_oversubscription", "storage", "emulator_threads"}
    if vm.cpu_sets:
        said |= {"cpu_sets", "cpu_thread_policy", "hypervisor", "realtime_vcpus"}
        if all(cs.floating for cs in vm.cpu_sets):  # a shared flavor with a NUMA topology
            specs["hw:cpu_policy"] = "shared"
        else:
            specs["hw:cpu_policy"] = "dedicated"
            specs["hw:cpu_thread_policy"] = _nova_thread_policy(vm)
        specs["hw:numa_nodes"] = str(len(vm.cpu_sets))
        for index, cs in enumerate(vm.cpu_sets):
            specs[f"hw:numa_cpus.{index}"] = ",".join(str(v) for v in cs.vcpus)
            specs[f"hw:numa_mem.{index}"] = str(cs.memory_mib)
        page = page_of(vm)
        if page:
            specs["hw:mem_page_size"] = str(page)
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
        if cs.howtogroup and specs.get("hw:cpu_thread_policy") != "require":
            notes.append(
                Note(
                    ("cpu_sets", index, "howtogroup"),
                    "not carried: Nova pairs vCPUs on sibling threads only with thread policy "
                    "require",
                )
            )
    notes += one_page_size(vm, "a Nova flavor") + one_thread_policy(vm, "a Nova flavor")
    return {"flavor": flavor}, notes


def to_openvim(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    said = {"cpu_sets", "hypervisor", "interfaces", "cpu_thread_policy"}
    notes = not_said(vm, "an OpenVIM flavor", said)
    numas = []
    for index, cs in enumerate(vm.cpu_sets):
        numa: dict[str, Any] = {}
        policy = (cs.thread_policy or vm.cpu_thread_policy).value
        pairs = [list(pair) for pair in cs.howtogroup]
        singles = list(cs.single_vcpus)
        if policy == "require":  # `require` pairs the single vCPUs in order too
            pairs += [singles[i : i + 2] for i in range(0, len(singles) - 1, 2)]
            singles = singles[len(singles) - len(singles) % 2 :]
        if pairs:
            numa["paired-threads"] = len(pairs)
            numa["paired-threads-id"] = pairs
        if singles:  # OpenVIM `threads` may share their core (prefer), `cores` may not
            numa["threads" if policy == "prefer" else "cores"] = len(singles)
        if cs.floating:
            notes.append(Note(("cpu_sets", index), "floating not carried: OpenVIM pins vCPUs"))
        pages = cs.hugepages
        if pages is None or pages.size_kib != 1024 * 1024 or pages.total_mib != cs.memory_mib:
            notes.append(
                Note(("cpu_sets", index), "OpenVIM memory is in 1 GiB pages; written as such")
            )
        elif cs.memory_mib % 1024:
            notes.append(Note(("cpu_sets", index, "memory_mib"), "OpenVIM memory is whole GiB"))
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
    return out, notes + interface_affinity_notes(vm, "OpenVIM")


def _openvim_interface(interface: Interface) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": interface.name,
        "dedicated": OPENVIM_MODES.get(interface.mode.value, "no"),
    }
    if interface.bandwidth_gbps:
        out["bandwidth"] = f"{interface.bandwidth_gbps} Gbps"
    return out


def _capabilities_kept(writer: Writer) -> Writer:
    """`writer`, with a note for the hypervisor requirements the written document does not imply:
    each dialect says pinning, NUMA and I/O needs in its own words, which its reader turns back
    into capabilities; anything else required of the hypervisor is lost, and said so."""

    def write(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
        from . import convert as read_back

        data, notes = writer(vm)
        wanted = vm.hypervisor.all_required_capabilities if vm.hypervisor else frozenset()
        back = as_mapping(read_back(data).data.get("hypervisor"))
        implied = set(back.get("required_capabilities") or ())
        for name in back.get("required_capability_sets") or ():
            implied |= {str(c) for c in CAPABILITY_SETS[CapabilitySet(name)]}
        lost = sorted(str(c) for c in wanted if str(c) not in implied)
        added = sorted(implied - {str(c) for c in wanted})
        said = [f"required capabilities {lost} are not carried"] if lost else []
        said += [f"read back, it also requires {added}"] if added else []
        if said and not any(n.path == ("hypervisor",) for n in notes):
            notes.append(Note(("hypervisor",), "; ".join(said), DROPPED))
        return data, notes

    return write


WRITERS: dict[str, Writer] = {
    "nova": _capabilities_kept(to_nova),
    "osm": _capabilities_kept(to_osm),
    "sol006": _capabilities_kept(to_sol006),
    "openvim": _capabilities_kept(to_openvim),
}
VNF_WRITERS: dict[str, VnfWriter] = {"osm": to_osm_vnf, "sol006": to_sol006_vnf}
"""The targets that write a VNF template of several VMs (one VDU per member)."""
