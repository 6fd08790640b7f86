"""Exact ids after the solve: PUs for every vCPU, the emulator PU, VFs and ports, PCI devices.

Cores of one class on one node are interchangeable for the model, so the ids are taken in ascending
order (lowest core first), pairs on the two threads of one core, an isolated vCPU's sibling listed in
`reserved_siblings`. The result is a VM Configuration that `claims.claim` accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..exact import KBPS_PER_GBPS
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import (
    CpuSetLink,
    CpuSetPlacement,
    HugepageAllocation,
    InterfacePlacement,
    PciDeviceAllocation,
    SharedCpus,
    VmConfiguration,
    with_requirements,
)
from ..models.vmd import InterfaceMode
from .hostview import HostView, NodeView, PortView, SharedPu, match_vfs
from .request import CpuSetDemand, InterfaceDemand, Request
from .solver import Layout


class AssignmentError(Exception):
    """The solved counts could not be turned into ids (a PCI device request that does not fit)."""


@dataclass
class _Pools:
    """A node's free PUs by class, taken lowest id first; `left` collects the threads that `prefer`
    vCPUs leave free on their cores (for the emulator PU or another `prefer` cpu-set)."""

    whole: dict[int, list[tuple[int, ...]]]  # core size -> cores
    single: list[int]
    half_iso: list[int]
    half_busy: list[int]
    left: list[int]

    @classmethod
    def of(cls, node: NodeView) -> _Pools:
        whole: dict[int, list[tuple[int, ...]]] = {}
        for core in sorted(node.whole_cores):
            whole.setdefault(len(core), []).append(core)
        return cls(
            whole,
            sorted(node.single_cores),
            sorted(node.half_isolated),
            sorted(node.half_busy),
            [],
        )

    def core(self, size: int) -> tuple[int, ...]:
        cores = self.whole.get(size)
        if not cores:
            raise AssignmentError(
                f"no whole core of {size} threads left"
            )  # the model prevents this
        return cores.pop(0)

    def thread(self, pool: str) -> int:
        if pool.startswith("whole"):
            return self.core(int(pool[5:]))[0]  # its other threads stay free
        items: list[int] = getattr(self, pool)
        if not items:
            raise AssignmentError(f"pool {pool} exhausted")  # the model prevents this
        return items.pop(0)


def _pin_cores(
    cs: CpuSetDemand, pool: _Pools, count: Callable[[str], int], sizes: list[int]
) -> tuple[dict[int, int], list[int], list[int]]:
    """Pins from whole cores and the per-thread pools; (pins, reserved siblings, vCPUs left to
    pin from the threads other cpu-sets leave free)."""
    pins: dict[int, int] = {}
    reserved: list[int] = []
    pairs = list(cs.pairs)
    for t in sizes:
        for _ in range(count(f"pair_w{t}")):
            a, b = pairs.pop(0)
            core = pool.core(t)
            pins[a], pins[b] = core[0], core[1]
            reserved.extend(core[2:])
    if pairs:
        raise AssignmentError(f"cpu-set {cs.id}: pairs {pairs} left without a core")
    singles = list(cs.singles)
    for t in sizes:
        for _ in range(count(f"iso_w{t}")):
            core = pool.core(t)
            pins[singles.pop(0)] = core[0]
            reserved.extend(core[1:])
        for k in range(t, 0, -1):
            for _ in range(count(f"pre_w{t}x{k}")):
                core = pool.core(t)
                for thread in core[:k]:
                    pins[singles.pop(0)] = thread
                pool.left.extend(core[k:])  # free for the VM's emulator or others
    for name, source in (
        ("iso_half", "half_iso"),
        ("iso_single", "single"),
        ("pre_half_busy", "half_busy"),
        ("pre_half_iso", "half_iso"),
        ("pre_single", "single"),
    ):
        for _ in range(count(name)):
            pins[singles.pop(0)] = pool.thread(source)
    later = singles[: count("pre_left")]
    if len(later) != len(singles):
        raise AssignmentError(f"cpu-set {cs.id}: vCPUs {singles} left without a PU")
    return pins, reserved, later


def instance_id(host: ComputeHostDescriptor, request: Request, given: str | None) -> str:
    if given:
        return given
    """The given id, or `<vm>@<host>-<k>` with the smallest k free on the host (unique in a fleet)."""
    taken = {i.id for i in host.instances}
    k = 1
    while f"{request.name}@{host.id}-{k}" in taken:
        k += 1
    return f"{request.name}@{host.id}-{k}"


def build_configuration(
    host: ComputeHostDescriptor,
    view: HostView,
    request: Request,
    layout: Layout | None,
    instance: str,
    shared: tuple[int, tuple[SharedPu, ...]] | None = None,
) -> VmConfiguration:
    vm = request.vm
    pools = {node.id: _Pools.of(node) for node in view.nodes}
    nodes = layout.nodes if layout else {}
    counts = layout.counts if layout else {}
    pinned: dict[int, tuple[dict[int, int], list[int], list[int]]] = {}
    for cs in request.cpu_sets:
        node_id = nodes[cs.id]

        def count(name: str, cs_id: int = cs.id, node_id: int = node_id) -> int:
            return counts.get((name, cs_id, node_id), 0)

        sizes = sorted(pools[node_id].whole)
        pinned[cs.id] = _pin_cores(cs, pools[node_id], count, sizes)
    emulator_pins: list[int] = []
    if request.emulator and request.cpu_sets:
        first = request.cpu_sets[0].id
        pool = pools[nodes[first]]
        for name in ["left", "half_busy", "half_iso", "single"] + [
            f"whole{t}" for t in sorted(pool.whole)
        ]:
            if counts.get((f"emu_{name}", first, nodes[first]), 0):
                emulator_pins.append(pool.thread(name))
    placements: list[CpuSetPlacement] = []
    for cs in request.cpu_sets:
        node_id = nodes[cs.id]
        pins, reserved, later = pinned[cs.id]
        for vcpu in later:
            pins[vcpu] = pools[node_id].thread("left")
        placements.append(
            CpuSetPlacement(
                id=cs.id,
                numa_node=node_id,
                vcpu_pins={v: pins[v] for v in cs.vcpus},
                memory_mib=cs.memory_mib,
                hugepages=(
                    HugepageAllocation(size_kib=cs.hugepage_size_kib, count=cs.hugepage_count)
                    if cs.hugepage_size_kib is not None
                    else None
                ),
                memory_bandwidth_gbps=(cs.memory_bandwidth_kbps / KBPS_PER_GBPS) or None,
                reserved_siblings=tuple(sorted(reserved)),
                howtogroup=cs.pairs,  # on sibling threads: renderers give the guest threads=2
            )
        )
    interfaces = _interfaces(host, view, request, layout, nodes)
    links = tuple(
        CpuSetLink(
            cpu_sets=link.cpu_sets,
            numa_nodes=(nodes[link.cpu_sets[0]], nodes[link.cpu_sets[1]]),
            bandwidth_mbps=link.bandwidth_mbps,
        )
        for link in request.links
        if link.cpu_sets[0] in nodes
        and link.cpu_sets[1] in nodes
        and nodes[link.cpu_sets[0]] != nodes[link.cpu_sets[1]]
    )
    shared_cpus = None
    if shared is not None and request.shared is not None:
        node_id, pus = shared
        shared_cpus = SharedCpus(
            vcpus=request.shared.vcpus,
            cpus=tuple(p.pu for p in pus),
            numa_node=node_id,
            memory_mib=request.shared.memory_mib,
            oversubscribed=request.shared.vcpus > len(pus),
        )
    devices = _devices(view, request, layout)
    impact = vm.impact
    config = VmConfiguration(
        vm=vm.name,
        instance=instance,
        host=host.id,
        vcpus=vm.total_vcpus,
        memory_mib=vm.total_memory_mib,
        thread_policy=(
            None
            if not request.cpu_sets
            else request.cpu_sets[0].policy
            if request.cpu_sets[0].synthetic
            else vm.cpu_thread_policy
        ),
        cpu_sets=tuple(placements),
        shared=shared_cpus,
        emulator_pins=tuple(emulator_pins),
        realtime_vcpus=vm.realtime_vcpus,
        interfaces=interfaces,
        pci_devices=devices,
        cpu_set_links=links,
        memory_bandwidth_gbps=(impact.memory_bandwidth_gbps or 0.0) if impact else 0.0,
        variant=request.variant,
    )
    return with_requirements(config, vm)  # networks, VLANs, cpu-set policies, the descriptor


def _interfaces(
    host: ComputeHostDescriptor,
    view: HostView,
    request: Request,
    layout: Layout | None,
    nodes: dict[int, int],
) -> tuple[InterfacePlacement, ...]:
    ports = {p.pci_address: p for n in view.nodes for p in n.ports}
    vfs = _vfs(ports, request, layout)
    vswitch = host.hypervisor.vswitch if host.hypervisor else None
    out = []
    for iface in request.interfaces:
        node = nodes.get(iface.cpu_set) if iface.cpu_set is not None else None
        if iface.mode is InterfaceMode.vswitch:
            out.append(
                InterfacePlacement(
                    name=iface.name,
                    cpu_set=iface.cpu_set,
                    mode=iface.mode,
                    numa_node=node if iface.restricted else None,
                    bandwidth_gbps=iface.bandwidth_gbps,
                    vhost_user=bool(vswitch and vswitch.accelerated),
                )
            )
            continue
        if layout is None or iface.name not in layout.ports:
            raise AssignmentError(f"interface {iface.name} has no port")
        port = ports[layout.ports[iface.name]]
        if iface.mode is InterfaceMode.dedicated:
            out.append(
                InterfacePlacement(
                    name=iface.name,
                    cpu_set=iface.cpu_set,
                    mode=iface.mode,
                    pci_address=port.pci_address,
                    numa_node=port.node,
                    bandwidth_gbps=iface.bandwidth_gbps or port.speed_gbps,
                )
            )
        else:
            out.append(
                InterfacePlacement(
                    name=iface.name,
                    cpu_set=iface.cpu_set,
                    mode=iface.mode,
                    pci_address=vfs[iface.name],
                    physical_function=port.pci_address,
                    numa_node=port.node,
                    bandwidth_gbps=iface.bandwidth_gbps,
                )
            )
    return tuple(out)


def _vfs(ports: dict[str, PortView], request: Request, layout: Layout | None) -> dict[str, str]:
    """The VF of each SR-IOV interface (a VF paced below a demand cannot serve it)."""
    users: dict[str, list[InterfaceDemand]] = {}
    for iface in request.interfaces:
        if iface.mode is InterfaceMode.sriov and layout is not None and iface.name in layout.ports:
            users.setdefault(layout.ports[iface.name], []).append(iface)  # others: the caller's
    out: dict[str, str] = {}
    for address, ifaces in users.items():
        port = ports[address]
        matched = match_vfs(port.vf_rates_kbps, [i.bandwidth_kbps for i in ifaces])
        if matched is None:
            raise AssignmentError(
                f"interfaces {', '.join(i.name for i in ifaces)}: no free VFs of {address} fit"
            )
        out.update((i.name, port.free_vfs[k]) for i, k in zip(ifaces, matched, strict=True))
    return out


def _devices(
    view: HostView, request: Request, layout: Layout | None
) -> tuple[PciDeviceAllocation, ...]:
    """The devices the model chose, in request order (`constraints/devices.py`)."""
    classes = {d.pci_address: d.device_class for n in view.nodes for d in n.devices}
    out = []
    for k, address, node in layout.devices if layout else ():
        want = request.vm.pci_devices[k]
        out.append(
            PciDeviceAllocation.model_validate(
                {
                    "pci_address": address,
                    "class": classes[address],
                    "numa_node": node,
                    "cpu_set": want.cpu_set,
                }
            )
        )
    if len(out) != sum(w.count for w in request.vm.pci_devices):
        raise AssignmentError("the model chose fewer PCI devices than requested")
    return tuple(out)
