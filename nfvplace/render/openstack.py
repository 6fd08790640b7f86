"""OpenStack Nova flavor extra specs and Neutron port vNIC types.

Nova schedules by itself: a flavor states requirements, not the PUs, nodes or devices a
configuration chose. So the extra specs render the *VM Descriptor* when one is given (`vm=`), with the
variant the configuration applied; without it they are derived from the configuration (the cpu-sets
as guest NUMA nodes, page sizes, pairs, thread policy, realtime vCPUs, emulator PUs). Every
requirement Nova cannot express becomes a warning. `docs/render.md` lists the mapping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from ..dialects.nova_traits import mask_text
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import InterfaceMode, ThreadPolicy, VmDescriptor
from ._common import cache_ways_warnings, check_host, check_vm, cpu_list, guest_layout
from .flavor_request import FlavorRequest, request_from_config, request_from_vm
from .nova_names import cpu_flag_trait, nova_page_size
from .result import RenderResult

STRICTEST = ("required", "legacy", "socket", "preferred")
VNIC_TYPES: dict[InterfaceMode, str] = {
    InterfaceMode.dedicated: "direct-physical",
    InterfaceMode.sriov: "direct",
    InterfaceMode.vswitch: "normal",
}


def _cpu_specs(req: FlavorRequest, specs: dict[str, str]) -> None:
    pinned = [v for cell in req.cells if not cell.floating for v in cell.vcpus]
    if pinned and (req.shared_vcpus or any(cell.floating for cell in req.cells)):
        specs["hw:cpu_policy"] = "mixed"
        specs["hw:cpu_dedicated_mask"] = cpu_list(pinned)
    elif pinned:
        specs["hw:cpu_policy"] = "dedicated"
    else:
        specs["hw:cpu_policy"] = "shared"
        return
    pairs = [p for cell in req.cells for p in cell.pairs]
    paired = {v for p in pairs for v in p}
    policy = req.thread_policy
    if pairs and paired.issuperset(pinned):
        policy = ThreadPolicy.require
        aligned = all(sorted(p) == [min(p), min(p) + 1] and min(p) % 2 == 0 for p in pairs)
        if aligned and not req.shared_vcpus:
            specs["hw:cpu_threads"] = "2"
        else:
            req.warnings.append(
                "Nova cannot choose which vCPUs share a core: howtogroup pairs "
                f"{[list(p) for p in pairs if not (min(p) % 2 == 0 and max(p) == min(p) + 1)]} "
                "are not (2k, 2k+1), the sibling numbering of a guest topology with threads=2"
            )
    elif pairs:
        req.warnings.append(
            f"Nova applies one thread policy to every vCPU: the howtogroup pairs "
            f"{[list(p) for p in pairs]} next to unpaired vCPUs "
            f"{cpu_list(set(pinned) - paired)} cannot be expressed; rendered "
            f"hw:cpu_thread_policy={policy.value} for all"
        )
    specs["hw:cpu_thread_policy"] = policy.value
    overrides = sorted(
        {c.thread_policy.value for c in req.cells if c.thread_policy and c.thread_policy != policy}
    )
    if overrides:
        req.warnings.append(
            f"per-cpu-set thread policies {overrides} cannot be expressed: Nova has one "
            f"hw:cpu_thread_policy per flavor ({policy.value})"
        )


def _numa_specs(req: FlavorRequest, specs: dict[str, str]) -> None:
    if not req.cells:
        return
    specs["hw:numa_nodes"] = str(len(req.cells))
    cell_vcpus = [list(c.vcpus) for c in req.cells]
    cell_memory = [c.memory_mib for c in req.cells]
    if req.shared_vcpus:
        cell_vcpus[0].extend(req.shared_vcpus)
        cell_memory[0] += req.memory_mib - sum(cell_memory)
        req.warnings.append(
            f"Nova puts every vCPU in a guest NUMA node: the floating vCPUs "
            f"{cpu_list(req.shared_vcpus)} and their memory are rendered in node 0"
        )
    for index, (vcpus, memory) in enumerate(zip(cell_vcpus, cell_memory, strict=True)):
        specs[f"hw:numa_cpus.{index}"] = cpu_list(vcpus)
        specs[f"hw:numa_mem.{index}"] = str(memory)
    hosts = [c.host_node for c in req.cells if c.host_node is not None]
    if len(hosts) != len(set(hosts)):
        req.warnings.append(
            f"cpu-sets share host NUMA nodes {hosts}; Nova always puts guest NUMA nodes on "
            "distinct host nodes, so it needs more host nodes than this configuration uses"
        )


def _memory_specs(req: FlavorRequest, specs: dict[str, str]) -> None:
    words = sorted({c.page_word for c in req.cells if c.page_word})
    if words:  # chosen on the host node: Nova's own words
        specs["hw:mem_page_size"] = "large" if "large" in words else words[0]
        if len(words) > 1 or any(not c.page_word for c in req.cells):
            req.warnings.append(
                f"cpu-sets use different page sizes; Nova has one hw:mem_page_size per flavor, "
                f"rendered {specs['hw:mem_page_size']}"
            )
        return
    sizes = sorted({c.page_size_kib for c in req.cells if c.page_size_kib})
    if not sizes:
        if any(p.vhost_user for p in req.ports if p.mode is InterfaceMode.vswitch):
            specs["hw:mem_page_size"] = "large"
            req.warnings.append(
                "vhost-user ports need the guest memory in hugepages under Nova; rendered "
                "hw:mem_page_size=large although the descriptor asks for none"
            )
        return
    chosen = sizes[-1]
    specs["hw:mem_page_size"] = nova_page_size(chosen)
    if len(sizes) > 1:
        req.warnings.append(
            f"cpu-sets use different page sizes {[nova_page_size(s) for s in sizes]}; Nova has "
            f"one hw:mem_page_size per flavor, rendered {nova_page_size(chosen)}"
        )
    for index, cell in enumerate(req.cells):
        if cell.page_size_kib is None:
            req.warnings.append(
                f"cpu-set {index} asks for no hugepages, but Nova backs every guest node with "
                f"hw:mem_page_size={nova_page_size(chosen)}"
            )
        elif cell.page_mib < cell.memory_mib:
            req.warnings.append(
                f"cpu-set {index} asks for {cell.page_mib} MiB of its {cell.memory_mib} MiB in "
                f"hugepages; Nova backs the whole guest node with "
                f"{nova_page_size(chosen)} pages ({cell.memory_mib} MiB)"
            )


def _realtime_specs(req: FlavorRequest, specs: dict[str, str]) -> None:
    if req.emulator_isolate:
        specs["hw:emulator_threads_policy"] = "isolate"
    if not req.realtime:
        return
    specs["hw:cpu_realtime"] = "yes"
    ordinary = sorted(set(range(req.vcpus)) - set(req.realtime))
    if ordinary:
        specs["hw:cpu_realtime_mask"] = mask_text(ordinary)
    else:
        specs["hw:cpu_realtime_mask"] = cpu_list(req.realtime)
        if not req.emulator_isolate:
            req.warnings.append(
                "every vCPU is realtime: Nova then needs hw:emulator_threads_policy=isolate "
                "(emulator_threads: isolate in the VMD), or it refuses the flavor"
            )


def _port_specs(req: FlavorRequest, specs: dict[str, str]) -> list[dict[str, Any]]:
    ports: list[dict[str, Any]] = []
    pci_bound = False
    for port in req.ports:
        entry: dict[str, Any] = {"name": port.name, "binding:vnic_type": VNIC_TYPES[port.mode]}
        if port.physical_network:
            entry["network"] = port.physical_network
        if port.numa_affinity:  # Neutron's port attribute, which Nova reads as the port's policy
            entry["numa_affinity_policy"] = str(port.numa_affinity)
        ports.append(entry)
        if port.mode is not InterfaceMode.vswitch:
            pci_bound = pci_bound or port.cell is not None
        if port.bandwidth_gbps:
            req.warnings.append(
                f"interface {port.name}: {port.bandwidth_gbps} Gbps of bandwidth is not a flavor "
                "extra spec; attach a Neutron QoS minimum-bandwidth rule to the port"
            )
        if port.vlan is not None:
            req.warnings.append(
                f"interface {port.name}: VLAN {port.vlan} comes from the Neutron network's "
                "segmentation, not from the flavor"
            )
        if port.cell is not None and port.mode is not InterfaceMode.vswitch and len(req.cells) > 1:
            req.warnings.append(
                f"interface {port.name} must sit on the host node of cpu-set {port.cell}; Nova's "
                "hw:pci_numa_affinity_policy=required only keeps it on one of the VM's nodes"
            )
        if port.mode is InterfaceMode.vswitch and port.cell is not None:
            req.warnings.append(
                f"interface {port.name}: Nova cannot tie a vSwitch port to a NUMA node"
            )
    for device_class, count, cell in req.pci_devices:
        alias = "pci_passthrough:alias"
        previous = specs.get(alias)
        entry_text = f"{device_class}:{count}"
        specs[alias] = f"{previous},{entry_text}" if previous else entry_text
        pci_bound = pci_bound or cell is not None
    if req.pci_devices:
        req.warnings.append(
            "pci_passthrough:alias names a [pci] alias per device class; define the aliases "
            "(vendor and product ids) in nova.conf"
        )
    if req.pci_affinities:  # the VMD's own words, Nova's (the strictest when they differ)
        policy = next(p for p in STRICTEST if p in req.pci_affinities)
        specs["hw:pci_numa_affinity_policy"] = policy
        if len(req.pci_affinities) > 1:
            req.warnings.append(
                f"PCI devices ask for NUMA affinities {list(req.pci_affinities)}; Nova has one "
                f"hw:pci_numa_affinity_policy per flavor, rendered {policy}"
            )
    elif pci_bound:
        specs["hw:pci_numa_affinity_policy"] = "required"
    elif any(p.mode is not InterfaceMode.vswitch for p in req.ports) or req.pci_devices:
        specs["hw:pci_numa_affinity_policy"] = "preferred"
    return ports


def _vm_only_warnings(vm: VmDescriptor, specs: dict[str, str], warnings: list[str]) -> None:
    processor = vm.processor
    if processor is not None:
        for flag in processor.required_flags:
            trait = cpu_flag_trait(flag)
            if trait:
                specs[f"trait:{trait}"] = "required"
            else:
                warnings.append(f"CPU flag {flag!r} has no os-traits name nfvplace knows")
        if processor.model or processor.min_frequency_mhz or processor.compatible_models:
            warnings.append(
                "processor model and frequency cannot be required by a flavor; use a host "
                "aggregate and AggregateInstanceExtraSpecsFilter"
            )
    if vm.memory and (vm.memory.min_speed_mts or vm.memory.min_channels or vm.memory.type):
        warnings.append("memory type, speed and channels cannot be expressed in Nova")
    hypervisor = vm.hypervisor
    if hypervisor is not None:
        if hypervisor.version or hypervisor.min_version:
            warnings.append("a hypervisor version cannot be required by a flavor")
        if hypervisor.all_required_capabilities:
            caps = sorted(c.value for c in hypervisor.all_required_capabilities)
            warnings.append(
                f"hypervisor capabilities {caps} are not flavor extra specs; Nova implies "
                "pinning and NUMA support from the hw: specs, the rest needs host aggregates"
            )
        if hypervisor.vswitch and hypervisor.vswitch.accelerated:
            warnings.append(
                "an accelerated vSwitch is chosen by the Neutron mechanism driver of the host, "
                "not by the flavor"
            )
    if vm.cpu_set_bandwidth:
        warnings.append("bandwidth between cpu-sets cannot be expressed in Nova")
    if vm.impact is not None:
        if vm.impact.max_instances_per_host is not None:
            warnings.append(
                f"at most {vm.impact.max_instances_per_host} instances per host: Nova can only "
                "approximate this with a server group (anti-affinity with max_server_per_host)"
            )
        if vm.impact.memory_bandwidth_gbps or vm.impact.interconnect_bandwidth_gbps:
            warnings.append("memory and interconnect bandwidth limits cannot be expressed in Nova")
    if any(cs.memory_bandwidth_gbps for cs in vm.cpu_sets):
        warnings.append("per-cpu-set memory bandwidth cannot be expressed in Nova")
    if any(d.dedicated for d in vm.storage) or len(vm.storage) > 1:
        warnings.append(
            "only the first disk becomes the flavor's root disk; others are Cinder volumes"
        )
    if not vm.cpu_sets and not vm.cpu_oversubscription:
        warnings.append(
            "the VM may not run on oversubscribed PUs, but Nova oversubscribes shared vCPUs by the "
            "host's cpu_allocation_ratio; use an aggregate of hosts with a ratio of 1.0"
        )
    if vm.memory_oversubscription:
        warnings.append("memory oversubscription is set per host (ram_allocation_ratio) in Nova")


def render_openstack(
    config: VmConfiguration,
    vm: VmDescriptor | None = None,
    host: ComputeHostDescriptor | None = None,
) -> RenderResult:
    """Flavor (vcpus, ram, disk, extra specs) and per-port vNIC types as YAML, plus warnings."""
    vm = check_vm(config, vm)
    check_host((config,), host)
    guest_layout(config)  # refuse inconsistent configurations here too
    req = request_from_vm(vm, config) if vm is not None else request_from_config(config)
    specs: dict[str, str] = {}
    _cpu_specs(req, specs)
    _numa_specs(req, specs)
    _memory_specs(req, specs)
    _realtime_specs(req, specs)
    ports = _port_specs(req, specs)
    if vm is not None:
        _vm_only_warnings(vm, specs, req.warnings)
    req.warnings.extend(cache_ways_warnings(config, "a Nova flavor"))
    req.warnings.append(
        "Nova chooses the host PUs, NUMA nodes, hugepages and devices itself: the exact pins and "
        f"PCI addresses of the configuration on {config.host} are not enforced by a flavor"
    )
    flavor: dict[str, Any] = {
        "name": req.name,
        "vcpus": req.vcpus,
        "ram": req.memory_mib,
        "disk": req.disk_gib,
        "extra_specs": specs,
    }
    document: dict[str, Any] = {"flavor": flavor, "ports": ports}
    header = [
        f"# OpenStack flavor and ports for {req.name}, from the {req.source}.",
        "# openstack flavor create "
        + f"--vcpus {req.vcpus} --ram {req.memory_mib} --disk {req.disk_gib} "
        + " ".join(f"--property {k}={v}" for k, v in specs.items())
        + f" {req.name}",
    ]
    text = "\n".join(header) + "\n" + yaml.safe_dump(document, sort_keys=False, width=100)
    return RenderResult(text=text, warnings=_unique(req.warnings))


def _unique(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


__all__ = ["VNIC_TYPES", "cpu_flag_trait", "nova_page_size", "render_openstack"]
