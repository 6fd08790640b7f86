"""VMware `.vmx` advanced settings for a placed VM (seed 000: real-time RAN on vSphere).

Pure: `render_vmx(config, vm=None, host=None)` returns `key = "value"` lines and warnings.
`docs/render.md` explains each setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import InterfacePlacement, VmConfiguration
from ..models.vmd import InterfaceMode, VmDescriptor
from ._common import (
    GuestLayout,
    Pci,
    cache_ways_warnings,
    check_host,
    check_vm,
    cpu_list,
    guest_layout,
    guest_pairs,
    require_passthrough_addresses,
    total_memory_mib,
)
from .result import RenderResult

ONE_GIB_KIB = 1024 * 1024
TWO_MIB_KIB = 2048


def esxi_pci_id(address: str) -> str:
    """ESXi writes `pciPassthruN.id` in decimal, `%05d:%03d:%02d.%d`: 0000:af:00.0 -> 00000:175:00.0."""
    pci = Pci.parse(address)
    return f"{pci.domain:05d}:{pci.bus:03d}:{pci.slot:02d}.{pci.function}"


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _esxi_cpus(pus: tuple[int, ...] | list[int]) -> str:
    """vmx affinity lists are comma-separated PU numbers."""
    return ",".join(str(pu) for pu in sorted(set(pus)))


def _device_ids(host: ComputeHostDescriptor | None, address: str) -> tuple[str | None, str | None]:
    if host is None:
        return None, None
    wanted = address.lower()
    for node in host.numa_nodes:
        for nic in node.nics:
            for port in nic.ports:
                vf_addresses = {vf.pci_address.lower() for vf in port.vfs}
                if port.pci_address.lower() == wanted or wanted in vf_addresses:
                    return nic.vendor_id, nic.device_id
    return None, None


@dataclass
class _Vmx:
    """The `.vmx` lines being written, and the warnings about what they cannot say."""

    lines: list[str]
    warnings: list[str] = field(default_factory=list)

    def comment(self, text: str) -> None:
        self.lines.append(f"# {text}")

    def setting(self, key: str, value: str) -> None:
        self.lines.append(f"{key} = {_quote(value)}")


def render_vmx(
    config: VmConfiguration,
    vm: VmDescriptor | None = None,
    host: ComputeHostDescriptor | None = None,
) -> RenderResult:
    """The `.vmx` lines that pin, lock and pass through what the configuration placed."""
    vm = check_vm(config, vm)
    host = check_host((config,), host)
    layout = guest_layout(config)
    require_passthrough_addresses(config)
    out = _Vmx([f"# nfvplace: VM Configuration of {config.vm} on host {config.host}"])
    out.setting("displayName", config.owner)
    out.setting("numvcpus", str(layout.total_vcpus))
    memory_mib = total_memory_mib(config)
    out.setting("memSize", str(memory_mib))
    _cpu_affinity(out, config, vm, layout)
    _memory(out, config, memory_mib)
    _numa(out, config)
    _latency(out, config, layout, host)
    passthru = _interfaces(out, config.interfaces, host)
    for pci_device in config.pci_devices:
        key = f"pciPassthru{passthru}"
        passthru += 1
        out.comment(f"{pci_device.device_class} device {pci_device.pci_address}")
        out.setting(f"{key}.present", "TRUE")
        out.setting(f"{key}.id", esxi_pci_id(pci_device.pci_address))
    out.warnings.extend(cache_ways_warnings(config, "a .vmx file"))
    if passthru:
        out.warnings.append(
            "pciPassthruN.systemId (the ESXi host's UUID) is not known from the CHD; vSphere "
            "fills it in when the device is added through the client"
        )
    return RenderResult(text="\n".join(out.lines) + "\n", warnings=tuple(out.warnings))


def _cpu_affinity(
    out: _Vmx, config: VmConfiguration, vm: VmDescriptor | None, layout: GuestLayout
) -> None:
    shared_pus = tuple(config.shared.cpus) if config.shared else ()
    if layout.pins or shared_pus or layout.floating:
        out.comment("vCPU affinity: one host PU per pinned vCPU, the shared PUs for the others")
        for vcpu in range(layout.total_vcpus):
            pus = (
                (layout.pins[vcpu],)
                if vcpu in layout.pins
                else layout.floating.get(vcpu, shared_pus)
            )
            if pus:
                out.setting(f"sched.vcpu{vcpu}.affinity", _esxi_cpus(pus))
    dedicated = bool(layout.pins) and not layout.shared_vcpus
    if dedicated:
        out.setting("sched.cpu.affinity.exclusive", "TRUE")
        pairs = guest_pairs(config, vm)
        if pairs:
            out.comment("two vCPUs of a howtogroup pair share one core's hyper-threads")
            out.setting("sched.cpu.affinity.exclusiveType", "loose")
            out.warnings.append(
                "vSphere does not show SMT siblings to the guest: the howtogroup pairs are "
                "pinned to sibling threads, but the guest sees independent cores"
            )
    elif layout.pins:
        out.warnings.append(
            f"vCPUs {cpu_list(layout.shared_vcpus)} float on shared PUs, so the VM's affinity "
            "cannot be exclusive (sched.cpu.affinity.exclusive is per VM); pins are not exclusive"
        )
    if config.emulator_pins:
        out.warnings.append(
            f"emulator PUs {cpu_list(config.emulator_pins)} have no .vmx setting: vSphere "
            "places the VMX and world threads itself"
        )


def _memory(out: _Vmx, config: VmConfiguration, memory_mib: int) -> None:
    pinned_memory = bool(config.cpu_sets) or bool(config.realtime_vcpus)
    if pinned_memory:
        out.comment("reserve, pin and preallocate all guest memory")
        out.setting("sched.mem.min", str(memory_mib))
        out.setting("sched.mem.pin", "TRUE")
        out.setting("sched.mem.prealloc", "TRUE")
        out.setting("sched.mem.prealloc.pinnedMainMem", "TRUE")
    sizes = sorted({cs.hugepages.size_kib for cs in config.cpu_sets if cs.hugepages})
    if ONE_GIB_KIB in sizes:
        out.setting("sched.mem.lpage.enable1GPage", "TRUE")
    for size in sizes:
        if size not in (ONE_GIB_KIB, TWO_MIB_KIB):
            out.warnings.append(f"ESXi has no {size} KiB pages; only 2 MiB and 1 GiB")
    partial = [
        cs.id for cs in config.cpu_sets if cs.hugepages and cs.hugepages.total_mib < cs.memory_mib
    ]
    if partial and ONE_GIB_KIB in sizes:
        out.warnings.append(
            f"cpu-sets {partial} back only part of their memory with hugepages; ESXi backs the "
            "whole VM with large pages when sched.mem.lpage.enable1GPage is set"
        )


def _numa(out: _Vmx, config: VmConfiguration) -> None:
    nodes = sorted({cs.numa_node for cs in config.cpu_sets})
    if not nodes and config.shared is not None and config.shared.numa_node is not None:
        nodes = [config.shared.numa_node]
    if nodes:
        out.setting("numa.nodeAffinity", ",".join(str(n) for n in nodes))
    if len(config.cpu_sets) > 1:
        sizes_per_set = sorted({len(cs.vcpu_pins) for cs in config.cpu_sets})
        if len(sizes_per_set) == 1:
            out.setting("numa.vcpu.maxPerVirtualNode", str(sizes_per_set[0]))
        else:
            out.warnings.append(
                f"cpu-sets of {sizes_per_set} vCPUs: vSphere builds virtual NUMA nodes of equal "
                "size, so the guest does not see the cpu-sets as its NUMA nodes"
            )


def _latency(
    out: _Vmx, config: VmConfiguration, layout: GuestLayout, host: ComputeHostDescriptor | None
) -> None:
    if not config.realtime_vcpus:
        return
    out.comment("latency sensitivity and the enhanced tail-latency profile (seed 000)")
    out.setting("sched.cpu.latencySensitivity", "high")
    out.setting("sched.cpu.affinity.exclusiveNoStats", "TRUE")
    out.setting("monitor.forceEnableMPTI", "TRUE")
    out.setting("timeTracker.lowLatency", "TRUE")
    frequency = host.processor.frequency_mhz if host else None
    if frequency:
        out.setting("sched.cpu.min", str(int(frequency * layout.total_vcpus)))
    else:
        out.warnings.append(
            "latency sensitivity 'high' needs a full CPU reservation (sched.cpu.min, MHz); "
            "give --host so the processor frequency is known"
        )
    out.warnings.append(
        "vSphere has no per-vCPU FIFO scheduling: the realtime vCPUs "
        f"{cpu_list(config.realtime_vcpus)} get latency sensitivity for the whole VM"
    )


def _interfaces(
    out: _Vmx, interfaces: Sequence[InterfacePlacement], host: ComputeHostDescriptor | None
) -> int:
    """vmxnet3 adapters for vSwitch ports, pciPassthruN for the others; the passthroughs used."""
    passthru = 0
    ethernet = 0
    for iface in interfaces:
        if iface.mode is InterfaceMode.vswitch:
            out.comment(f"{iface.name}: vSwitch port")
            out.setting(f"ethernet{ethernet}.present", "TRUE")
            out.setting(f"ethernet{ethernet}.virtualDev", "vmxnet3")
            ethernet += 1
            if iface.vhost_user:
                out.warnings.append(
                    f"interface {iface.name}: vSphere has no vhost-user; rendered as vmxnet3 "
                    "(use an Enhanced Data Path / ENS switch for an accelerated data plane)"
                )
            continue
        assert iface.pci_address is not None
        key = f"pciPassthru{passthru}"
        passthru += 1
        if iface.mode is InterfaceMode.dedicated:
            out.comment(f"{iface.name}: DirectPath I/O of port {iface.pci_address}")
            out.setting(f"{key}.present", "TRUE")
            out.setting(f"{key}.id", esxi_pci_id(iface.pci_address))
            vendor, device = _device_ids(host, iface.pci_address)
            if vendor and device:
                out.setting(f"{key}.vendorId", f"0x{vendor}")
                out.setting(f"{key}.deviceId", f"0x{device}")
            continue
        pf = iface.physical_function
        out.comment(f"{iface.name}: SR-IOV passthrough of a VF of {pf or 'its port'}")
        out.setting(f"{key}.present", "TRUE")
        if pf:
            out.setting(f"{key}.pfId", esxi_pci_id(pf))
        else:
            out.warnings.append(
                f"interface {iface.name}: no physical_function, so the SR-IOV adapter has no "
                "pfId; choose the physical function in vSphere"
            )
        out.warnings.append(
            f"interface {iface.name}: ESXi picks the VF of the physical function itself; the "
            f"VF {iface.pci_address} of the configuration is not enforced"
        )
    return passthru
