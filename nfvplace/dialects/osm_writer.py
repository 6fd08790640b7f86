"""VM Descriptors and VNF templates written as OSM IM VNFDs (`vnfd-catalog`, VDUs with guest-epa)
and ETSI SOL006 VNFDs (with OSM's EPA augment of `virtual-compute-desc`).

A VM is one VDU; a VNF template one VDU per member, named after the member, with its count (OSM:
the VDU's `count`; SOL006: the first deployment flavour's `min-number-of-instances`) and, in
SOL006, its host anti-affinity groups. Reading what was written gives the same descriptor for
what the dialect can say; everything else is a note.
"""

from __future__ import annotations

from typing import Any

from ..models.vmd import VmDescriptor
from ..models.vnf import AntiAffinityScope, VnfTemplate
from .base import Note
from .vm_parts import (
    interface_affinity_notes,
    not_said,
    one_page_size,
    one_thread_policy,
    page_of,
    vm_size,
)

OSM_MODES = {"sriov": "SR-IOV", "dedicated": "PCI-PASSTHROUGH", "vswitch": "PARAVIRT"}
OSM_PAGES: dict[int | str, str] = {
    2048: "SIZE_2MB",
    1024 * 1024: "SIZE_1GB",
    "large": "LARGE",
    "any": "PREFER_LARGE",
}


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


def _floats(vm: VmDescriptor) -> bool:
    return bool(vm.cpu_sets) and all(cs.floating for cs in vm.cpu_sets)


def _osm_epa(vm: VmDescriptor) -> dict[str, Any]:
    """guest-epa: SHARED with a NUMA layout for floating cpu-sets; a page size OSM has no word
    for (not 2 MiB or 1 GiB) is written `LARGE`, any large size (a note says so)."""
    shared = "SHARED" if vm.cpu_oversubscription else "ANY"
    if not vm.cpu_sets:
        return {"cpu-pinning-policy": shared}
    floats = _floats(vm)
    epa: dict[str, Any] = {"cpu-pinning-policy": shared if floats else "DEDICATED"}
    if not floats:
        epa["cpu-thread-pinning-policy"] = vm.cpu_thread_policy.value.upper()
    epa["numa-node-policy"] = _osm_numa(vm)
    page = page_of(vm)
    if page:
        epa["mempage-size"] = OSM_PAGES.get(page, "LARGE")
    return epa


def _odd_page_note(vm: VmDescriptor) -> list[Note]:
    page = page_of(vm)
    if not page or page in OSM_PAGES:
        return []
    return [
        Note(
            ("cpu_sets",),
            f"{page} KiB pages written as mempage-size LARGE (OSM has no word for the size): "
            "read back, any large page size",
        )
    ]


def _osm_interface_notes(vm: VmDescriptor) -> list[Note]:
    """OSM does not say which NUMA node an interface is on: read back, SR-IOV and passthrough
    interfaces go to cpu-set 0 and vSwitch ports to no node."""
    return [
        Note(
            ("cpu_sets", index, "interfaces"),
            "not carried: OSM does not tie an interface to a NUMA node (read back, SR-IOV and "
            "passthrough interfaces go to the first cpu-set, vSwitch ports to none)",
        )
        for index, cs in enumerate(vm.cpu_sets)
        if any(index > 0 or i.mode.value == "vswitch" for i in cs.interfaces)
    ]


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


OSM_TARGET = "OSM guest-epa"
SOL006_TARGET = "SOL006 (with OSM's EPA augment)"


def _osm_vdu(vm: VmDescriptor, vdu_id: str) -> dict[str, Any]:
    vcpus, memory = vm_size(vm)
    vdu: dict[str, Any] = {
        "id": vdu_id,
        "vm-flavor": {"vcpu-count": vcpus, "memory-mb": memory},
        "guest-epa": _osm_epa(vm),
    }
    interfaces = _osm_interfaces(vm)
    if interfaces:
        vdu["interface"] = interfaces
    if vm.hypervisor is not None and str(vm.hypervisor.type) == "kvm":
        vdu["hypervisor-epa"] = {"type": "REQUIRE_KVM"}
    return vdu


def _sol006_vdu(vm: VmDescriptor, vdu_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The VDU and its `virtual-compute-desc`."""
    vcpus, memory = vm_size(vm)
    epa = _osm_epa(vm)
    cpu: dict[str, Any] = {"num-virtual-cpu": vcpus}
    mem: dict[str, Any] = {"size": memory / 1024}
    if vm.cpu_sets and not _floats(vm):
        cpu["pinning"] = {"policy": "static", "thread-policy": epa["cpu-thread-pinning-policy"]}
    else:
        cpu["pinning"] = {"policy": "dynamic"}
    if vm.cpu_sets:
        mem["numa-node-policy"] = epa["numa-node-policy"]
        if "mempage-size" in epa:
            mem["mempage-size"] = epa["mempage-size"]
    vdu: dict[str, Any] = {"id": vdu_id, "virtual-compute-desc": f"{vdu_id}-compute"}
    interfaces = _osm_interfaces(vm)
    if interfaces:
        vdu["interface"] = interfaces
    return vdu, {"id": f"{vdu_id}-compute", "virtual-cpu": cpu, "virtual-memory": mem}


def _vm_notes(vm: VmDescriptor, target: str) -> list[Note]:
    notes = not_said(vm, target, OSM_SAID | {"vcpus", "memory_mib"})
    notes += one_thread_policy(vm, target) + one_page_size(vm, target) + _odd_page_note(vm)
    return notes + _osm_interface_notes(vm) + interface_affinity_notes(vm, "OSM")


def to_osm(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    vnfd = {"id": vm.name, "vdu": [_osm_vdu(vm, vm.name)]}
    return {"vnfd-catalog": {"vnfd": [vnfd]}}, _vm_notes(vm, OSM_TARGET)


def to_sol006(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    vdu, compute = _sol006_vdu(vm, vm.name)
    vnfd = {"id": vm.name, "vdu": [vdu], "virtual-compute-desc": [compute]}
    return {"etsi-nfv-vnfd:vnfd": vnfd}, _vm_notes(vm, SOL006_TARGET)


def _members(vnf: VnfTemplate, target: str) -> tuple[list[tuple[str, VmDescriptor]], list[Note]]:
    """(VDU id, VM) per member, and the notes of what each VM says that `target` cannot."""
    vms: list[tuple[str, VmDescriptor]] = []
    notes: list[Note] = []
    for index, member in enumerate(vnf.members):
        vm = member.descriptor
        assert vm is not None  # convert inlines members given as files
        vms.append((member.name, vm))
        at = ("members", index, "descriptor")
        notes += [Note((*at, *n.path), n.message, n.kind) for n in _vm_notes(vm, target)]
        if vm.name != member.name:
            notes.append(
                Note(
                    (*at, "name"),
                    f"the VDU is named after the member '{member.name}'; the VM's own name is "
                    "not carried",
                )
            )
    return vms, notes


def _vnfd_head(vnf: VnfTemplate, vendor_key: str) -> dict[str, Any]:
    head: dict[str, Any] = {"id": vnf.name}
    if vnf.vendor:
        head[vendor_key] = vnf.vendor
    if vnf.version:
        head["version"] = vnf.version
    return head


def _links_note(vnf: VnfTemplate) -> list[Note]:
    if not vnf.links:
        return []
    return [
        Note(
            ("links",),
            "not carried: links are not written as internal virtual links (whose "
            "bandwidth and locality the VNFD cannot say)",
        )
    ]


def to_osm_vnf(vnf: VnfTemplate) -> tuple[dict[str, Any], list[Note]]:
    """An OSM IM VNFD with one VDU per member (its `count`); links and anti-affinity: notes."""
    vms, notes = _members(vnf, OSM_TARGET)
    vdus = []
    for member, (vdu_id, vm) in zip(vnf.members, vms, strict=True):
        vdu = _osm_vdu(vm, vdu_id)
        if member.count > 1:
            vdu["count"] = member.count
        vdus.append(vdu)
    notes += not_said(vnf, "an OSM IM VNFD", {"members", "vendor", "version", "links"})
    notes += _links_note(vnf)
    return {"vnfd-catalog": {"vnfd": [{**_vnfd_head(vnf, "vendor"), "vdu": vdus}]}}, notes


def to_sol006_vnf(vnf: VnfTemplate) -> tuple[dict[str, Any], list[Note]]:
    """A SOL006 VNFD with one VDU per member, and a deployment flavour with the members' counts
    and host anti-affinity groups; links and NUMA-node anti-affinity: notes."""
    vms, notes = _members(vnf, SOL006_TARGET)
    parts = [_sol006_vdu(vm, vdu_id) for vdu_id, vm in vms]
    profiles: list[dict[str, Any]] = [
        {"id": vdu_id, "min-number-of-instances": member.count}
        for member, (vdu_id, _) in zip(vnf.members, vms, strict=True)
    ]
    groups = []
    for index, group in enumerate(vnf.anti_affinity):
        if group.scope is not AntiAffinityScope.host:
            notes.append(
                Note(
                    ("anti_affinity", index, "scope"),
                    "not carried: SOL006's anti-affinity scope nfvi-node is a host",
                )
            )
            continue
        group_id = f"anti-affinity-{index}"
        groups.append({"id": group_id, "type": "anti-affinity", "scope": "nfvi-node"})
        for profile in profiles:
            if profile["id"] in group.members:
                profile.setdefault("affinity-or-anti-affinity-group", []).append({"id": group_id})
    df: dict[str, Any] = {"id": "default", "vdu-profile": profiles}
    if groups:
        df["affinity-or-anti-affinity-group"] = groups
    vnfd = {
        **_vnfd_head(vnf, "provider"),
        "vdu": [vdu for vdu, _ in parts],
        "virtual-compute-desc": [compute for _, compute in parts],
        "df": [df],
    }
    said = {"members", "vendor", "version", "anti_affinity", "links"}
    notes += not_said(vnf, "a SOL006 VNFD", said) + _links_note(vnf)
    return {"etsi-nfv-vnfd:vnfd": vnfd}, notes
