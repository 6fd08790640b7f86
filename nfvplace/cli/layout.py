"""`place --explain`: what each placed VM was given, in plain words: per cpu-set its NUMA node, the
PU each vCPU is pinned to (and the siblings kept idle), the hugepages and cache ways; the ports and
VFs of its interfaces with their node; the shared PUs and the emulator threads. Pure: a VM
Configuration in, lines out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..models.units import format_memory_kib
from ..visual.overlay import ranges

if TYPE_CHECKING:
    from ..models.configuration import CpuSetPlacement, InterfacePlacement, VmConfiguration


def _cpu_set(cs: CpuSetPlacement) -> list[str]:
    pins = ", ".join(f"{vcpu}->{pu}" for vcpu, pu in sorted(cs.vcpu_pins.items()))
    policy = f" ({cs.thread_policy.value})" if cs.thread_policy else ""
    lines = [f"cpu-set {cs.id} on NUMA node {cs.numa_node}{policy}: vCPU->PU {pins or 'none'}"]
    if cs.howtogroup:
        lines.append(f"  SMT pairs (vCPUs on the two threads of one core): {list(cs.howtogroup)}")
    if cs.reserved_siblings:
        lines.append(f"  siblings kept idle: PUs {ranges(cs.reserved_siblings)}")
    memory = f"  memory: {cs.memory_mib} MiB from node {cs.numa_node}"
    if cs.hugepages and cs.hugepages.count:
        size = format_memory_kib(cs.hugepages.size_kib)
        memory += f", as {cs.hugepages.count} x {size} hugepages of that node's pool"
    lines.append(memory)
    if cs.cache_ways:
        ways = cs.cache_ways
        last = ways.first_way + ways.ways - 1
        lines.append(f"  L3 cache {ways.domain}: ways {ways.first_way}-{last} ({ways.ways} ways)")
    if cs.floating:
        lines.append(
            f"  floating vCPUs {list(cs.floating.vcpus)} over PUs {ranges(cs.floating.cpus)}"
        )
    return lines


def _interface(i: InterfacePlacement) -> str:
    where = f" on NUMA node {i.numa_node}" if i.numa_node is not None else ""
    device = f" {i.pci_address}" if i.pci_address else ""
    port = f" (a VF of port {i.physical_function})" if i.physical_function else ""
    speed = f", {i.bandwidth_gbps:g} Gbps" if i.bandwidth_gbps else ""
    owner = f", for cpu-set {i.cpu_set}" if i.cpu_set is not None else ""
    return f"interface {i.name}: {i.mode.value}{device}{port}{where}{speed}{owner}"


def layout_lines(config: VmConfiguration) -> list[str]:
    """What `config` gives its VM on its host, one fact a line."""
    name = config.instance or config.vm
    lines = [
        f"{name} on {config.host}" + (f" (variant {config.variant})" if config.variant else "")
    ]
    for cs in config.cpu_sets:
        lines.extend(f"  {line}" for line in _cpu_set(cs))
    if config.shared:
        node = f" of node {config.shared.numa_node}" if config.shared.numa_node is not None else ""
        lines.append(
            f"  shared: {config.shared.vcpus} vCPUs over PUs {ranges(config.shared.cpus)}{node}, "
            f"{config.shared.memory_mib} MiB"
        )
    if config.emulator_pins:
        lines.append(f"  emulator threads: PUs {ranges(config.emulator_pins)}")
    if config.realtime_vcpus:
        lines.append(f"  realtime vCPUs: {list(config.realtime_vcpus)}")
    lines.extend(f"  {_interface(i)}" for i in config.interfaces)
    lines.extend(
        f"  PCI device {d.pci_address} ({d.device_class}) on NUMA node {d.numa_node}"
        for d in config.pci_devices
    )
    return lines
