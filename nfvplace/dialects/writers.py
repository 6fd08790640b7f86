"""A VM Descriptor written back out in a dialect: Nova flavor extra specs, OSM guest-epa, SOL006
(with OSM's EPA augment) and OpenVIM `numas`.

Each writer returns the dialect document and a note for every part of the VM the dialect cannot
say (its path in the VM Descriptor). Reading what a writer wrote gives the same VM Descriptor for
what the dialect can say (the round-trip tests check it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..models.capabilities import CAPABILITY_SETS, CapabilitySet
from ..models.vmd import Interface, VmDescriptor
from .base import DROPPED, Note, as_mapping
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


def _nova_thread_policy(vm: VmDescriptor) -> str:
    """`require` when every vCPU is in a sibling pair (OpenVIM `paired-threads`): read back, it
    pairs them again, where `isolate` would give each vCPU a whole core of its own."""
    if all(cs.vcpus and not cs.single_vcpus for cs in vm.cpu_sets):
        return "require"
    return vm.cpu_thread_policy.value


def to_nova(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    vcpus, memory = _size(vm)
    specs: dict[str, str] = {}
    said = {"vcpus", "memory_mib", "cpu_oversubscription", "storage", "emulator_threads"}
    if vm.cpu_sets:
        said |= {"cpu_sets", "cpu_thread_policy", "hypervisor", "realtime_vcpus"}
        specs["hw:cpu_policy"] = "dedicated"
        specs["hw:cpu_thread_policy"] = _nova_thread_policy(vm)
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
        if cs.howtogroup and specs["hw:cpu_thread_policy"] != "require":
            notes.append(
                Note(
                    ("cpu_sets", index, "howtogroup"),
                    "not carried: Nova pairs vCPUs on sibling threads only with thread policy "
                    "require",
                )
            )
    notes += _one_page_size(vm, "a Nova flavor") + _one_thread_policy(vm, "a Nova flavor")
    return {"flavor": flavor}, notes


def _one_thread_policy(vm: VmDescriptor, target: str) -> list[Note]:
    """A note per cpu-set whose own thread policy differs from the VM's (`target` has one)."""
    return [
        Note(
            ("cpu_sets", index, "thread_policy"),
            f"not carried: {target} has one thread policy for all its vCPUs",
        )
        for index, cs in enumerate(vm.cpu_sets)
        if cs.thread_policy is not None and cs.thread_policy != vm.cpu_thread_policy
    ]


def _one_page_size(vm: VmDescriptor, target: str) -> list[Note]:
    """`target` has one page size for all of the VM's memory: hugepages that cover part of a
    cpu-set's memory, or sizes that differ between cpu-sets, are not carried."""
    page = _page_kib(vm)
    notes = []
    for index, cs in enumerate(vm.cpu_sets):
        pages = cs.hugepages
        if page is None and pages is None:
            continue
        if pages is None or pages.size_kib != page or pages.total_mib != cs.memory_mib:
            notes.append(
                Note(
                    ("cpu_sets", index, "hugepages"),
                    f"not carried: {target} backs all of its memory with one page size "
                    f"({'none' if page is None else f'{page} KiB'} written)",
                )
            )
    return notes


def to_openvim(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    said = {"cpu_sets", "hypervisor", "interfaces", "cpu_thread_policy"}
    notes = _not_said(vm, "an OpenVIM flavor", said)
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
    notes += _one_thread_policy(vm, "OSM guest-epa") + _one_page_size(vm, "OSM guest-epa")
    notes += _osm_interface_notes(vm)
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
    notes += _one_thread_policy(vm, "SOL006") + _one_page_size(vm, "SOL006")
    notes += _osm_interface_notes(vm)
    return {"etsi-nfv-vnfd:vnfd": vnfd}, notes


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
