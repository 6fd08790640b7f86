"""A host's free resources, classified the way placement counts them.

For every NUMA node: free cores with no thread used (`whole_cores`, with their free threads: a
howtogroup pair, an isolated vCPU with its siblings kept idle, or up to that many `prefer` vCPUs),
free single-thread cores (no SMT), free threads whose siblings no VM can get (host-reserved: fine even
for `isolate`), free threads whose sibling is used by a VM (only for `prefer`), the shared pool, free
hugepages per size, free normal memory, memory bandwidth, ports with their free VFs and bandwidth, the
PCIe budget of each NIC, and free PCI devices. Built once per host (the fleet index keeps the counts;
the solver and the PU assignment use the lists). Capacities are exact: integers (kbit/s, MiB, pages)
or fractions (shared-CPU room), see `exact.py`.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from ..exact import kbps, rational
from ..models.chd import ComputeHostDescriptor, Cpu, CpuState, Nic, NumaNode, PortUsage

EPS = 1e-9
# usable bandwidth per PCIe lane by generation (Gbps, after line encoding: 8b/10b up to gen 2,
# 128b/130b from gen 3)
PCIE_LANE_GBPS = {1: 2.0, 2: 4.0, 3: 7.877, 4: 15.754, 5: 31.508, 6: 63.015}


def pcie_gbps(nic: Nic) -> float | None:
    """The NIC's usable PCIe bandwidth: stated, or generation x lanes; None when unknown."""
    if nic.pcie_bandwidth_gbps is not None:
        return nic.pcie_bandwidth_gbps
    if nic.pcie_generation in PCIE_LANE_GBPS and nic.pcie_lanes:
        return PCIE_LANE_GBPS[nic.pcie_generation] * nic.pcie_lanes
    return None


@dataclass(frozen=True, slots=True)
class PortView:
    pci_address: str
    node: int
    speed_gbps: float
    bandwidth_free_kbps: int  # port speed less bandwidth used (not less the NIC's PCIe budget)
    free_vfs: tuple[str, ...]
    dedicable: bool  # eligible, unused, no VF in use: can be passed through whole
    sriov_ok: bool  # eligible and free or already shared through VFs
    physical_network: str | None = None
    vf_rates_kbps: tuple[int | None, ...] = ()  # pacing of each free VF (None: not paced)
    nic: str = ""  # key of the NIC in `NodeView.nic_free_kbps`

    @property
    def bandwidth_free_gbps(self) -> float:
        return self.bandwidth_free_kbps / 1_000_000


def fitting_vf(
    rates: Sequence[int | None], need_kbps: int, taken: Container[int] = ()
) -> int | None:
    """Index of the free VF paced closest above `need_kbps` (an unpaced one last), not in `taken`."""
    best: tuple[bool, int, int] | None = None
    for k, rate in enumerate(rates):
        if k in taken or (rate is not None and rate < need_kbps):
            continue
        key = (rate is None, rate or 0, k)
        if best is None or key < best:
            best = key
    return None if best is None else best[2]


def match_vfs(rates: Sequence[int | None], needs: Sequence[int]) -> list[int] | None:
    """The free VF (an index of `rates`) of each demand on one port (kbit/s each), None when they
    do not all fit. Widest demand first, each on the VF paced closest above it: this best fit
    serves them all whenever the solver's per-threshold counts (Hall's condition over nested sets)
    say it can."""
    out = [-1] * len(needs)
    taken: set[int] = set()
    for n in sorted(range(len(needs)), key=lambda n: -needs[n]):
        k = fitting_vf(rates, needs[n], taken)
        if k is None:
            return None
        taken.add(k)
        out[n] = k
    return out


@dataclass(frozen=True, slots=True)
class SharedPu:
    pu: int
    ratio: Fraction
    usage: Fraction

    @property
    def spare_vcpus(self) -> Fraction:
        return max((1 - self.usage) * self.ratio, Fraction(0))


@dataclass(frozen=True, slots=True)
class DeviceView:
    pci_address: str
    device_class: str
    vendor: str | None
    model: str | None


@dataclass(frozen=True, slots=True)
class NodeView:
    id: int
    whole_cores: tuple[tuple[int, ...], ...]  # free threads of each core with no thread used
    single_cores: tuple[int, ...]  # PUs of free cores that have one thread
    half_isolated: tuple[int, ...]  # free threads whose siblings no VM can get
    half_busy: tuple[int, ...]  # free threads whose sibling is used by a VM
    eligible_threads: int
    shared: tuple[SharedPu, ...]
    hugepages_free: dict[int, int]
    normal_free_mib: int  # without oversubscription
    normal_free_over_mib: int  # with the node's memory oversubscription ratio
    normal_total_mib: int  # outside hugepage pools, less the host's reservation
    memory_bandwidth_free_kbps: int | None
    ports: tuple[PortView, ...]
    devices: tuple[DeviceView, ...]
    nic_free_kbps: dict[str, int] = field(default_factory=dict)  # PCIe budget left, known NICs

    @property
    def free_threads(self) -> int:
        return (
            sum(len(c) for c in self.whole_cores)
            + len(self.single_cores)
            + len(self.half_isolated)
            + len(self.half_busy)
        )

    @property
    def core_sizes(self) -> tuple[int, ...]:
        """The distinct thread counts of the whole free cores (2 on SMT2 hosts), ascending."""
        return tuple(sorted({len(c) for c in self.whole_cores}))

    def whole_of_size(self, size: int) -> int:
        return sum(1 for c in self.whole_cores if len(c) == size)

    @property
    def shared_spare_vcpus(self) -> Fraction:
        return sum((p.spare_vcpus for p in self.shared), Fraction(0))


@dataclass(frozen=True, slots=True)
class HostView:
    id: str
    nodes: tuple[NodeView, ...]
    smt: bool
    vswitch_bandwidth_free_kbps: int | None  # None: no bandwidth figure (not limited)
    links_free_kbps: dict[tuple[int, int], int] = field(default_factory=dict)
    distances: dict[tuple[int, int], int] = field(default_factory=dict)  # by node id, when known

    def node(self, node_id: int) -> NodeView:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)


def _classify(
    node_cpus: tuple[Cpu, ...], cpu_by_id: dict[int, Cpu]
) -> tuple[list[tuple[int, ...]], list[int], list[int], list[int], int]:
    """(whole cores, single cores, half-isolated threads, half-busy threads, eligible threads)."""
    whole: dict[tuple[int, ...], None] = {}
    single: list[int] = []
    half_iso: list[int] = []
    half_busy: list[int] = []
    eligible = 0
    for cpu in node_cpus:
        if not cpu.eligible:
            continue
        eligible += 1
        if cpu.state is not CpuState.free:
            continue
        free = [cpu.id]
        has_other = any_used = False
        for s in cpu.siblings:
            if s == cpu.id:
                continue
            has_other = True
            other = cpu_by_id.get(s)
            if other is None or not other.eligible:
                continue
            if other.state is CpuState.free:
                free.append(s)
            else:
                any_used = True
        if not has_other:
            single.append(cpu.id)
        elif any_used:
            half_busy.append(cpu.id)
        elif len(free) >= 2:
            whole[tuple(sorted(free))] = None
        else:
            half_iso.append(cpu.id)
    return list(whole), single, half_iso, half_busy, eligible


def node_ports(node: NumaNode) -> tuple[tuple[PortView, ...], dict[str, int]]:
    """The ports of `node` as placement sees them, and the PCIe budget left of NICs that state one."""
    ports: list[PortView] = []
    nic_free: dict[str, int] = {}
    for k, nic in enumerate(node.nics):
        key = f"n{node.id}nic{k}"
        budget = pcie_gbps(nic)
        if budget is not None:
            used = sum(kbps(p.bandwidth_used_gbps) for p in nic.ports)
            nic_free[key] = max(kbps(budget) - used, 0)
        for port in nic.ports:
            free = [vf for vf in port.vfs if not vf.in_use]
            any_vf_used = len(free) < len(port.vfs)
            ports.append(
                PortView(
                    pci_address=port.pci_address,
                    node=node.id,
                    speed_gbps=port.speed_gbps,
                    bandwidth_free_kbps=max(
                        kbps(port.speed_gbps) - kbps(port.bandwidth_used_gbps), 0
                    ),
                    free_vfs=tuple(vf.pci_address for vf in free),
                    dedicable=port.eligible
                    and port.usage is PortUsage.free
                    and not any_vf_used
                    and kbps(port.bandwidth_used_gbps) == 0,
                    sriov_ok=port.eligible and port.usage in (PortUsage.free, PortUsage.sriov),
                    physical_network=port.physical_network,
                    vf_rates_kbps=tuple(
                        None if vf.rate_gbps is None else kbps(vf.rate_gbps) for vf in free
                    ),
                    nic=key,
                )
            )
    return tuple(ports), nic_free


def shared_pus(node: NumaNode) -> tuple[SharedPu, ...]:
    """The node's shared pool: eligible PUs in state `shared` and free PUs given a ratio."""
    shared: list[SharedPu] = []
    for cpu in node.cpus:
        if cpu.eligible and (
            cpu.state is CpuState.shared
            or (cpu.state is CpuState.free and cpu.oversubscription_ratio)
        ):
            ratio = rational(cpu.oversubscription_ratio) or Fraction(1)
            shared.append(SharedPu(cpu.id, ratio, rational(cpu.usage_ratio)))
    return tuple(shared)


def _node_view(host: ComputeHostDescriptor, index: int, cpu_by_id: dict[int, Cpu]) -> NodeView:
    node = host.numa_nodes[index]
    whole, single, half_iso, half_busy, eligible = _classify(node.cpus, cpu_by_id)
    ports, nic_free = node_ports(node)
    memory = node.memory
    strict = max(memory.normal_total_mib - memory.normal.reserved_mib - memory.normal.used_mib, 0)
    bandwidth = (
        None
        if memory.bandwidth_gbps is None
        else max(kbps(memory.bandwidth_gbps) - kbps(memory.bandwidth_used_gbps), 0)
    )
    return NodeView(
        id=node.id,
        whole_cores=tuple(whole),
        single_cores=tuple(single),
        half_isolated=tuple(half_iso),
        half_busy=tuple(half_busy),
        eligible_threads=eligible,
        shared=shared_pus(node),
        hugepages_free={p.size_kib: p.free for p in memory.hugepages},
        normal_free_mib=strict,
        normal_free_over_mib=memory.normal_free_mib,
        normal_total_mib=max(memory.normal_total_mib - memory.normal.reserved_mib, 0),
        memory_bandwidth_free_kbps=bandwidth,
        ports=ports,
        devices=tuple(
            DeviceView(d.pci_address, str(d.device_class), d.vendor, d.model)
            for d in node.pci_devices
            if d.eligible and not d.in_use
        ),
        nic_free_kbps=nic_free,
    )


def _distances(host: ComputeHostDescriptor) -> dict[tuple[int, int], int]:
    table = host.numa_distances
    ids = [node.id for node in host.numa_nodes]
    if not table or len(table) != len(ids) or any(len(row) != len(ids) for row in table):
        return {}
    return {(a, b): table[i][j] for i, a in enumerate(ids) for j, b in enumerate(ids)}


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
        else max(kbps(vswitch.bandwidth_gbps) - kbps(vswitch.bandwidth_used_gbps), 0)
    )
    links = {
        (min(link.nodes), max(link.nodes)): max(
            kbps(link.bandwidth_gbps) - kbps(link.bandwidth_used_gbps), 0
        )
        for link in host.interconnect
    }
    return HostView(
        id=host.id,
        nodes=nodes,
        smt=smt,
        vswitch_bandwidth_free_kbps=vswitch_free,
        links_free_kbps=links,
        distances=_distances(host),
    )
