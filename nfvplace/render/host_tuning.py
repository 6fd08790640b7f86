"""Host tuning for a host and the VM Configurations placed on it.

Two parts (seeds 003 and 001):

- the kernel command line: `isolcpus`, `nohz_full`, `rcu_nocbs` on the PUs VMs pin to,
  `irqaffinity` and `kthread_cpus` on the housekeeping PUs, the hugepage reservation per size (per
  node when nodes differ), and `intel_iommu=on iommu=pt` (or `amd_iommu=on`) when devices are passed
  through;
- an IRQ affinity plan (seed 001's IA strategy): every NIC port's and every VM's VF interrupts go to
  housekeeping PUs of the device's own NUMA node, never to PUs running vCPUs;
- the L3 cache allocation (Intel RDT CAT, Linux resctrl): one group per VM with exclusive ways,
  holding its cpu-sets' PUs, and the default group shrunk to the ways nobody holds.

`compute_host_tuning` returns the plan as data; `render_host_tuning` writes it as a shell script.
Both are pure. `docs/render.md` explains each parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from .. import errors
from ..errors import Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor, CpuState
from ..models.configuration import VmConfiguration
from ..models.vmd import InterfaceMode
from ._common import check_host, cpu_list, guest_layout, page_size_name
from .result import RenderResult


@dataclass(frozen=True, slots=True)
class IrqAssignment:
    """The PUs that serve one PCI function's interrupts."""

    pci_address: str
    role: str  # "port", "VF" or "device"
    label: str
    numa_node: int | None
    cpus: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class HugepageReservation:
    size_kib: int
    per_node: tuple[tuple[int, int], ...]  # (node, count), nodes with zero pages left out

    @property
    def total(self) -> int:
        return sum(count for _, count in self.per_node)


@dataclass(frozen=True, slots=True)
class CacheGroup:
    """A resctrl group: its schemata line (capacity bitmask per L3 cache) and its PUs."""

    name: str
    schemata: str  # "L3:0=7f0;1=00c"
    cpus: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class HostTuning:
    host: str
    isolated: tuple[int, ...]
    housekeeping: tuple[int, ...]
    hugepages: tuple[HugepageReservation, ...]
    iommu: str | None  # "intel", "amd" or None
    cmdline: tuple[str, ...]
    irq_plan: tuple[IrqAssignment, ...]
    warnings: tuple[str, ...] = field(default=())
    cache_groups: tuple[CacheGroup, ...] = ()
    default_schemata: str | None = None  # the default group's ways: those nobody holds


def _isolated_and_housekeeping(
    configs: Sequence[VmConfiguration], host: ComputeHostDescriptor | None, warnings: list[str]
) -> tuple[tuple[int, ...], tuple[int, ...], dict[int, int]]:
    held = {pu for c in configs for pu in c.held_cpus}
    shared = {pu for c in configs for pu in c.floating_cpus}
    if host is None:
        warnings.append(
            "no host descriptor: isolating only the PUs these configurations hold, and the "
            "housekeeping PUs (irqaffinity, kthread_cpus, IRQ plan) are unknown; give --host"
        )
        return tuple(sorted(held - shared)), (), {}
    node_of = {cpu.id: node.id for node in host.numa_nodes for cpu in node.cpus}
    unknown = sorted((held | shared) - set(node_of))
    if unknown:
        raise NfvplaceError(
            errors.RENDER_INVALID,
            f"configurations use PUs {cpu_list(unknown)} that host {host.id} does not have",
            issues=(Issue("unknown PUs", path="cpu_sets", hint="render with the right --host"),),
        )
    pmd = (
        set(host.hypervisor.vswitch.pmd_cpus)
        if host.hypervisor and host.hypervisor.vswitch
        else set()
    )
    isolated = {
        cpu.id
        for cpu in host.cpus
        if cpu.eligible and cpu.state != CpuState.shared and cpu.id not in shared
    }
    isolated |= held | pmd
    isolated -= shared
    housekeeping = {cpu.id for cpu in host.cpus if not cpu.eligible} - isolated
    if not housekeeping:
        warnings.append(
            f"host {host.id} marks no PU as host-reserved (eligible: false): the kernel, its "
            "interrupts and kthreads need housekeeping PUs; nothing is isolated"
        )
        isolated = set()
        housekeeping = set(node_of)
    return tuple(sorted(isolated)), tuple(sorted(housekeeping)), node_of


def _hugepages(
    configs: Sequence[VmConfiguration], host: ComputeHostDescriptor | None, warnings: list[str]
) -> tuple[HugepageReservation, ...]:
    wanted: dict[int, dict[int, int]] = {}
    for config in configs:
        for cs in config.cpu_sets:
            if cs.hugepages and cs.hugepages.count:
                per_node = wanted.setdefault(cs.hugepages.size_kib, {})
                per_node[cs.numa_node] = per_node.get(cs.numa_node, 0) + cs.hugepages.count
    if host is not None:
        pools = {
            (pool.size_kib, node.id): pool.total
            for node in host.numa_nodes
            for pool in node.memory.hugepages
        }
        for size_kib, node_id in pools:
            wanted.setdefault(size_kib, {}).setdefault(node_id, 0)
        for size_kib, per_node in wanted.items():
            for node_id, need in per_node.items():
                total = pools.get((size_kib, node_id), 0)
                if need > total:
                    warnings.append(
                        f"node {node_id}: the configurations use {need} pages of "
                        f"{page_size_name(size_kib)}, more than the host's pool of {total}; "
                        f"reserving {need}"
                    )
                per_node[node_id] = max(need, total)
    return tuple(
        HugepageReservation(size, tuple(sorted((n, c) for n, c in per_node.items() if c)))
        for size, per_node in sorted(wanted.items(), reverse=True)
        if any(per_node.values())
    )


def _hugepage_args(
    reservations: tuple[HugepageReservation, ...], host: ComputeHostDescriptor | None
) -> list[str]:
    if not reservations:
        return []
    args = [f"default_hugepagesz={page_size_name(reservations[0].size_kib)}"]
    nodes = [n.id for n in host.numa_nodes] if host else None
    for res in reservations:
        counts = dict(res.per_node)
        even = nodes is not None and len({counts.get(n, 0) for n in nodes}) == 1
        # node-specific form (Linux 5.16+) unless every node gets the same: the plain count is
        # split evenly across nodes at boot
        node_form = ",".join(f"{n}:{c}" for n, c in res.per_node)
        value = str(res.total) if even else node_form
        args += [f"hugepagesz={page_size_name(res.size_kib)}", f"hugepages={value}"]
    return args


def _iommu(configs: Sequence[VmConfiguration], host: ComputeHostDescriptor | None) -> str | None:
    passthrough = any(
        i.mode in (InterfaceMode.dedicated, InterfaceMode.sriov)
        for c in configs
        for i in c.interfaces
    ) or any(c.pci_devices for c in configs)
    has_vfs = host is not None and any(port.vfs for node in host.numa_nodes for port in node.ports)
    if not (passthrough or has_vfs):
        return None
    vendor = host.processor.vendor if host else "GenuineIntel"
    return "amd" if "amd" in vendor.lower() else "intel"


def _irq_plan(
    configs: Sequence[VmConfiguration],
    host: ComputeHostDescriptor | None,
    housekeeping: tuple[int, ...],
    node_of: dict[int, int],
    warnings: list[str],
) -> tuple[IrqAssignment, ...]:
    def cpus_for(node: int | None, what: str) -> tuple[int, ...]:
        if not housekeeping:
            return ()
        local = tuple(pu for pu in housekeeping if node_of.get(pu) == node)
        if local:
            return local
        warnings.append(
            f"{what}: no housekeeping PU on node {node}; its interrupts go to housekeeping PUs "
            "of other nodes"
        )
        return housekeeping

    plan: dict[str, IrqAssignment] = {}
    if host is not None:
        for node in host.numa_nodes:
            for nic in node.nics:
                for port in nic.ports:
                    label = f"{nic.model} port {port.name or port.pci_address} ({port.usage.value})"
                    plan[port.pci_address.lower()] = IrqAssignment(
                        port.pci_address.lower(),
                        "port",
                        label,
                        node.id,
                        cpus_for(node.id, f"port {port.pci_address}"),
                    )
    for config in configs:
        for iface in config.interfaces:
            if iface.mode is InterfaceMode.dedicated and iface.pci_address:
                key = iface.pci_address.lower()
                port_node = plan[key].numa_node if key in plan else iface.numa_node
                plan[key] = IrqAssignment(
                    key,
                    "port",
                    f"port given whole to {config.owner} ({iface.name})",
                    port_node,
                    cpus_for(port_node, f"port {key}"),
                )
                continue
            if iface.mode is not InterfaceMode.sriov or not iface.pci_address:
                continue
            key = iface.pci_address.lower()
            vf_node = iface.numa_node
            if vf_node is None and iface.physical_function:
                pf = plan.get(iface.physical_function.lower())
                vf_node = pf.numa_node if pf else None
            plan[key] = IrqAssignment(
                key,
                "VF",
                f"VF of {config.owner} ({iface.name})",
                vf_node,
                cpus_for(vf_node, f"VF {key}"),
            )
    return tuple(sorted(plan.values(), key=lambda a: (a.numa_node or 0, a.pci_address)))


def compute_host_tuning(
    configs: Sequence[VmConfiguration], host: ComputeHostDescriptor | None = None
) -> HostTuning:
    """The kernel command line and IRQ plan for a host and the configurations placed on it."""
    if not configs and host is None:
        raise NfvplaceError(
            errors.RENDER_UNSUPPORTED,
            "host tuning needs a host descriptor or at least one VM Configuration",
        )
    hosts = {c.host for c in configs}
    if host is None and len(hosts) > 1:
        raise NfvplaceError(
            errors.RENDER_MISMATCH,
            f"configurations are for different hosts {sorted(hosts)}; host tuning is per host",
        )
    host = check_host(configs, host)
    for config in configs:
        guest_layout(config)
    warnings: list[str] = []
    isolated, housekeeping, node_of = _isolated_and_housekeeping(configs, host, warnings)
    hugepages = _hugepages(configs, host, warnings)
    iommu = _iommu(configs, host)
    cmdline: list[str] = []
    if isolated:
        cpus = cpu_list(isolated)
        cmdline += [f"isolcpus={cpus}", f"nohz_full={cpus}", f"rcu_nocbs={cpus}"]
    if housekeeping and isolated:
        cpus = cpu_list(housekeeping)
        cmdline += [f"irqaffinity={cpus}", f"kthread_cpus={cpus}"]
    cmdline += _hugepage_args(hugepages, host)
    if iommu == "intel":
        cmdline += ["intel_iommu=on", "iommu=pt"]
    elif iommu == "amd":
        cmdline += ["amd_iommu=on", "iommu=pt"]
    irq_plan = _irq_plan(configs, host, housekeeping, node_of, warnings)
    groups = _cache_groups(configs)
    default = _default_schemata(host, warnings) if groups else None
    name = host.id if host else next(iter(hosts))
    return HostTuning(
        host=name,
        isolated=isolated,
        housekeeping=housekeeping,
        hugepages=hugepages,
        iommu=iommu,
        cmdline=tuple(cmdline),
        irq_plan=irq_plan,
        warnings=tuple(dict.fromkeys(warnings)),
        cache_groups=groups,
        default_schemata=default,
    )


def _cache_groups(configs: Sequence[VmConfiguration]) -> tuple[CacheGroup, ...]:
    """One resctrl group per VM holding exclusive L3 ways: the masks of its cpu-sets by cache,
    and the PUs its cpu-sets pin to (with their reserved siblings)."""
    out = []
    for config in configs:
        masks: dict[int, int] = {}
        cpus: set[int] = set()
        for cs in config.cpu_sets:
            if cs.cache_ways is not None:
                masks[cs.cache_ways.domain] = (
                    masks.get(cs.cache_ways.domain, 0) | cs.cache_ways.mask
                )
                cpus.update(cs.vcpu_pins.values(), cs.reserved_siblings)
        if masks:
            line = ";".join(f"{d}={mask:x}" for d, mask in sorted(masks.items()))
            name = quote(config.owner, safe="@._-")  # discovery reads the owner back
            out.append(CacheGroup(name, f"L3:{line}", tuple(sorted(cpus))))
    return tuple(out)


def _default_schemata(host: ComputeHostDescriptor | None, warnings: list[str]) -> str | None:
    """The default group's ways: every way no allocation of the host holds (the host as claimed)."""
    allocation = host.cache_allocation if host else None
    if allocation is None:
        warnings.append(
            "L3 cache ways: give the host (--host) to shrink resctrl's default group to the ways "
            "nobody holds; until then the VMs' ways are shared with every other task"
        )
        return None
    parts = []
    for domain in allocation.domains:
        mask = (1 << domain.ways) - 1
        for a in domain.allocations:
            mask &= ~(((1 << a.ways) - 1) << a.first_way)
        if mask.bit_count() < allocation.min_ways:
            warnings.append(
                f"L3 cache {domain.id}: {mask.bit_count()} ways left for the default group, "
                f"fewer than min_ways {allocation.min_ways}"
            )
        parts.append(f"{domain.id}={mask:x}")
    return "L3:" + ";".join(parts)


def render_host_tuning(
    configs: Sequence[VmConfiguration], host: ComputeHostDescriptor | None = None
) -> RenderResult:
    """The host tuning as a commented shell script (kernel command line, pages, IRQ plan)."""
    tuning = compute_host_tuning(configs, host)
    owners = ", ".join(c.owner for c in configs) or "none"
    out = [
        "#!/bin/sh",
        f"# nfvplace host tuning for {tuning.host} (VMs: {owners})",
        "#",
        "# 1. Kernel command line: append to GRUB_CMDLINE_LINUX in /etc/default/grub,",
        "#    run update-grub (or grub2-mkconfig) and reboot.",
        f'NFVPLACE_KERNEL_CMDLINE="{" ".join(tuning.cmdline)}"',
        "",
    ]
    if tuning.hugepages:
        out.append("# 2. Hugepages per NUMA node (the same reservation, at run time; 1G pages may")
        out.append("#    fail to allocate once memory is fragmented, the command line is reliable)")
        for res in tuning.hugepages:
            for node, count in res.per_node:
                out.append(
                    f"echo {count} > /sys/devices/system/node/node{node}/hugepages/"
                    f"hugepages-{res.size_kib}kB/nr_hugepages"
                )
        out.append("")
    out.append("# 3. IRQ affinity: NIC and VF interrupts on housekeeping PUs of their own node")
    if tuning.irq_plan and any(a.cpus for a in tuning.irq_plan):
        out.append("systemctl disable --now irqbalance 2>/dev/null || true")
    for a in tuning.irq_plan:
        if not a.cpus:
            out.append(f"# {a.pci_address} ({a.label}): no housekeeping PUs known, skipped")
            continue
        cpus = cpu_list(a.cpus)
        out.append(f"# {a.pci_address}: {a.label}, node {a.numa_node} -> PUs {cpus}")
        out.append(
            f"for irq in $(ls /sys/bus/pci/devices/{a.pci_address}/msi_irqs 2>/dev/null); do "
            f"echo {cpus} > /proc/irq/$irq/smp_affinity_list; done"
        )
    out += _resctrl_lines(tuning)
    return RenderResult(text="\n".join(out) + "\n", warnings=tuning.warnings)


def _resctrl_lines(tuning: HostTuning) -> list[str]:
    if not tuning.cache_groups:
        return []
    out = [
        "",
        "# 4. L3 cache allocation (Intel RDT CAT): a resctrl group per VM with exclusive ways",
        "mountpoint -q /sys/fs/resctrl || mount -t resctrl resctrl /sys/fs/resctrl",
    ]
    if tuning.default_schemata:
        out.append(f"echo '{tuning.default_schemata}' > /sys/fs/resctrl/schemata")
    for group in tuning.cache_groups:
        path = f"/sys/fs/resctrl/{group.name}"
        out.append(f"mkdir -p {path}")
        out.append(f"echo '{group.schemata}' > {path}/schemata")
        if tuning.default_schemata:  # no other group shares its ways now
            out.append(f"echo exclusive > {path}/mode")
        out.append(f"echo {cpu_list(group.cpus)} > {path}/cpus_list")
    return out
