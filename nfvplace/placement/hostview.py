"""A host's free resources, classified the way placement counts them.

For every NUMA node: whole free cores (every thread eligible and free: one of them takes a howtogroup
pair, or an isolated vCPU with its sibling kept idle), free single-thread cores (no SMT), free threads
whose sibling no VM can get (host-reserved: fine even for `isolate`), free threads whose sibling is used by
a VM (only for `prefer`), the shared pool, free hugepages per size, free normal memory, memory bandwidth,
ports with their free VFs and bandwidth, and free PCI devices. Built once per host (the fleet index keeps
the counts; the solver and the PU assignment use the lists).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..models.chd import ComputeHostDescriptor, Cpu, CpuState, PortUsage

EPS = 1e-9


@dataclass(frozen=True, slots=True)
class PortView:
    pci_address: str
    node: int
    speed_gbps: float
    bandwidth_free_gbps: float
    free_vfs: tuple[str, ...]
    dedicable: bool  # eligible, unused, no VF in use: can be passed through whole
    sriov_ok: bool  # eligible and free or already shared through VFs
    physical_network: str | None = None


@dataclass(frozen=True, slots=True)
class SharedPu:
    pu: int
    ratio: float
    usage: float

    @property
    def spare_vcpus(self) -> float:
        return max((1.0 - self.usage) * self.ratio, 0.0)


@dataclass(frozen=True, slots=True)
class DeviceView:
    pci_address: str
    device_class: str
    vendor: str | None
    model: str | None


@dataclass(frozen=True, slots=True)
class NodeView:
    id: int
    whole_cores: tuple[tuple[int, ...], ...]  # threads of each wholly free SMT core, sorted
    single_cores: tuple[int, ...]  # PUs of free cores that have one thread
    half_isolated: tuple[int, ...]  # free threads whose siblings no VM can get
    half_busy: tuple[int, ...]  # free threads whose sibling is used by a VM
    eligible_threads: int
    shared: tuple[SharedPu, ...]
    hugepages_free: dict[int, int]
    normal_free_mib: int  # without oversubscription
    normal_free_over_mib: int  # with the node's memory oversubscription ratio
    normal_total_mib: int  # outside hugepage pools, less the host's reservation
    memory_bandwidth_free_mbps: int | None
    ports: tuple[PortView, ...]
    devices: tuple[DeviceView, ...]

    @property
    def free_threads(self) -> int:
        return (
            sum(len(c) for c in self.whole_cores)
            + len(self.single_cores)
            + len(self.half_isolated)
            + len(self.half_busy)
        )

    @property
    def shared_spare_vcpus(self) -> float:
        return sum(p.spare_vcpus for p in self.shared)


@dataclass(frozen=True, slots=True)
class HostView:
    id: str
    nodes: tuple[NodeView, ...]
    smt: bool
    vswitch_bandwidth_free_gbps: float | None  # None: no bandwidth figure (not limited)
    links_free_mbps: dict[tuple[int, int], int] = field(default_factory=dict)

    def node(self, node_id: int) -> NodeView:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)


def _node_view(host: ComputeHostDescriptor, index: int, cpu_by_id: dict[int, Cpu]) -> NodeView:
    node = host.numa_nodes[index]
    whole: dict[tuple[int, ...], None] = {}
    single: list[int] = []
    half_iso: list[int] = []
    half_busy: list[int] = []
    shared: list[SharedPu] = []
    eligible = 0
    for cpu in node.cpus:
        if not cpu.eligible:
            continue
        eligible += 1
        if cpu.state is CpuState.shared or (
            cpu.state is CpuState.free and cpu.oversubscription_ratio
        ):
            shared.append(
                SharedPu(cpu.id, cpu.oversubscription_ratio or 1.0, cpu.usage_ratio or 0.0)
            )
        if cpu.state is not CpuState.free:
            continue
        all_free = True
        has_other = any_used = False
        for s in cpu.siblings:
            if s == cpu.id:
                continue
            has_other = True
            other = cpu_by_id.get(s)
            if other is None or not other.eligible:
                all_free = False
            elif other.state is not CpuState.free:
                all_free = False
                any_used = True
        if not has_other:
            single.append(cpu.id)
        elif all_free:
            whole[tuple(sorted(cpu.siblings))] = None
        elif any_used:
            half_busy.append(cpu.id)
        else:
            half_iso.append(cpu.id)
    ports: list[PortView] = []
    for nic in node.nics:
        for port in nic.ports:
            free_vfs = tuple(vf.pci_address for vf in port.vfs if not vf.in_use)
            any_vf_used = any(vf.in_use for vf in port.vfs)
            ports.append(
                PortView(
                    pci_address=port.pci_address,
                    node=node.id,
                    speed_gbps=port.speed_gbps,
                    bandwidth_free_gbps=port.bandwidth_free_gbps,
                    free_vfs=free_vfs,
                    dedicable=port.eligible
                    and port.usage is PortUsage.free
                    and not any_vf_used
                    and port.bandwidth_used_gbps <= EPS,
                    sriov_ok=port.eligible and port.usage in (PortUsage.free, PortUsage.sriov),
                    physical_network=port.physical_network,
                )
            )
    memory = node.memory
    strict = max(memory.normal_total_mib - memory.normal.reserved_mib - memory.normal.used_mib, 0)
    bandwidth = (
        None
        if memory.bandwidth_gbps is None
        else max(int((memory.bandwidth_gbps - memory.bandwidth_used_gbps) * 1000), 0)
    )
    return NodeView(
        id=node.id,
        whole_cores=tuple(whole),
        single_cores=tuple(single),
        half_isolated=tuple(half_iso),
        half_busy=tuple(half_busy),
        eligible_threads=eligible,
        shared=tuple(shared),
        hugepages_free={p.size_kib: p.free for p in memory.hugepages},
        normal_free_mib=strict,
        normal_free_over_mib=memory.normal_free_mib,
        normal_total_mib=max(memory.normal_total_mib - memory.normal.reserved_mib, 0),
        memory_bandwidth_free_mbps=bandwidth,
        ports=tuple(ports),
        devices=tuple(
            DeviceView(d.pci_address, str(d.device_class), d.vendor, d.model)
            for d in node.pci_devices
            if d.eligible and not d.in_use
        ),
    )


def host_view(host: ComputeHostDescriptor) -> HostView:
    """Classify `host`'s free resources per NUMA node (pure, cheap: one pass over its PUs)."""
    cpus = host.cpus
    cpu_by_id: dict[int, Cpu] = {cpu.id: cpu for cpu in cpus}
    nodes = tuple(_node_view(host, i, cpu_by_id) for i in range(len(host.numa_nodes)))
    smt = any(len(cpu.siblings) > 1 for cpu in cpus)
    vswitch = host.hypervisor.vswitch if host.hypervisor else None
    vswitch_free = (
        None
        if vswitch is None or vswitch.bandwidth_gbps is None
        else max(vswitch.bandwidth_gbps - vswitch.bandwidth_used_gbps, 0.0)
    )
    links = {
        (min(link.nodes), max(link.nodes)): max(
            int((link.bandwidth_gbps - link.bandwidth_used_gbps) * 1000), 0
        )
        for link in host.interconnect
    }
    return HostView(
        id=host.id,
        nodes=nodes,
        smt=smt,
        vswitch_bandwidth_free_gbps=vswitch_free,
        links_free_mbps=links,
    )
