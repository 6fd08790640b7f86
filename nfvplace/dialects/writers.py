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
from .base import ASSUMED, DROPPED, Note, as_mapping
from .nova_writer import to_nova
from .osm_writer import to_osm, to_osm_vnf, to_sol006, to_sol006_vnf
from .vm_parts import (
    interface_affinity_notes,
    not_said,
    vm_size,
)

Writer = Callable[[VmDescriptor], tuple[dict[str, Any], list[Note]]]
VnfWriter = Callable[[VnfTemplate], tuple[dict[str, Any], list[Note]]]
TARGETS = ("nova", "osm", "sol006", "openvim")
OPENVIM_MODES = {"dedicated": "yes", "sriov": "yes:sriov"}
NOVA_VNF_HINTS = {
    "links": "connect the members' ports on Neutron networks",
    "anti_affinity": "boot the members in a server group with the policy anti-affinity",
}


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


def to_nova_vnf(vnf: VnfTemplate) -> tuple[dict[str, Any], list[Note]]:
    """A Nova flavor per member (`{"flavors": [...]}`, as `GET /flavors/detail` lists them),
    named `<template>-<member>`; counts, links and anti-affinity are said at boot, not by a flavor."""
    flavors = []
    notes: list[Note] = []
    for index, member in enumerate(vnf.members):
        vm = member.descriptor
        assert vm is not None  # convert inlines members given as files
        data, member_notes = WRITERS["nova"](vm)
        data["flavor"]["name"] = f"{vnf.name}-{member.name}"
        flavors.append(data["flavor"])
        at = ("members", index)
        notes += [Note((*at, "descriptor", *n.path), n.message, n.kind) for n in member_notes]
        if member.count > 1:
            notes.append(
                Note(
                    (*at, "count"),
                    f"{member.count} instances: a flavor has no count; boot them with "
                    f"min_count={member.count} (openstack server create --min)",
                    ASSUMED,
                )
            )
    for note in not_said(vnf, "a Nova flavor", {"members", "vendor", "version"}):
        how = NOVA_VNF_HINTS.get(str(note.path[0]))
        notes.append(Note(note.path, f"{note.message}: {how}" if how else note.message, note.kind))
    return {"flavors": flavors}, notes


VNF_WRITERS: dict[str, VnfWriter] = {
    "osm": to_osm_vnf,
    "sol006": to_sol006_vnf,
    "nova": to_nova_vnf,
}
"""The targets that write a VNF template of several VMs (one VDU per member)."""
