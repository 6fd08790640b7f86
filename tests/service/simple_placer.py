"""A SMALL first-fit placer for the service tests, standing in until the real engine is merged.

It is honest but naive: each cpu-set goes to the first NUMA node (of the first host, in the order
given) with enough free eligible PUs, free hugepages of the size asked, free normal memory, a free VF
per SR-IOV interface and a free port per dedicated interface; vCPUs are pinned to the lowest free PUs
(no SMT pairing, no thread isolation), vSwitch interfaces are ignored. It returns the same
`PlacementResult` contract as `nfvplace.placement.place`, so the service cannot tell the difference.
The tests choose the placer in ONE fixture (`placer_path` in conftest.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nfvplace.availability import claim
from nfvplace.models.chd import ComputeHostDescriptor, CpuState, NumaNode, PortUsage
from nfvplace.models.configuration import (
    CpuSetPlacement,
    HugepageAllocation,
    InterfacePlacement,
    VmConfiguration,
)
from nfvplace.models.vmd import CpuSet, Interface, VmDescriptor
from nfvplace.models.vnf import VnfTemplate
from nfvplace.placement.result import Diagnosis, PlacementResult, Rejection


def _node_fit(
    node: NumaNode, cs: CpuSet, interfaces: Sequence[Interface]
) -> tuple[str, str] | tuple[list[int], list[InterfacePlacement]]:
    free = [c.id for c in node.cpus if c.eligible and c.state == CpuState.free and c.owner is None]
    if len(free) < len(cs.vcpus):
        return (
            "cpus",
            f"node {node.id}: {len(free)} free PUs, cpu-set {cs.id} needs {len(cs.vcpus)}",
        )
    huge_mib = 0
    if cs.hugepages is not None and cs.hugepages.count:
        pool = node.memory.pool(cs.hugepages.size_kib)
        have = pool.free if pool else 0
        if have < cs.hugepages.count:
            return "hugepages", (
                f"node {node.id}: {have} free {cs.hugepages.size_kib} KiB pages, "
                f"cpu-set {cs.id} needs {cs.hugepages.count}"
            )
        huge_mib = cs.hugepages.total_mib
    normal = max(cs.memory_mib - huge_mib, 0)
    if node.memory.normal_free_mib < normal:
        return "memory", f"node {node.id}: {node.memory.normal_free_mib} MiB free, needs {normal}"
    placed: list[InterfacePlacement] = []
    taken: set[str] = set()
    for iface in interfaces:
        if iface.mode == "vswitch":
            continue
        found = None
        for port in node.ports:
            if not port.eligible:
                continue
            if iface.speed_gbps is not None and port.speed_gbps < iface.speed_gbps:
                continue
            if iface.mode == "dedicated":
                if port.usage == PortUsage.free and port.pci_address not in taken:
                    found = (port.pci_address, None)
                    break
            else:
                vf = next(
                    (v for v in port.vfs if not v.in_use and v.pci_address not in taken), None
                )
                if vf is not None and port.usage in (PortUsage.free, PortUsage.sriov):
                    found = (vf.pci_address, port.pci_address)
                    break
        if found is None:
            reason = "port" if iface.mode == "dedicated" else "sriov_vf"
            return reason, f"node {node.id}: no free {iface.mode} port/VF for {iface.name}"
        taken.add(found[0])
        placed.append(
            InterfacePlacement(
                name=iface.name,
                cpu_set=cs.id,
                mode=iface.mode,
                pci_address=found[0],
                physical_function=found[1],
                numa_node=node.id,
                bandwidth_gbps=iface.bandwidth_gbps or 0.0,
            )
        )
    return sorted(free)[: len(cs.vcpus)], placed


def _place_vm(
    host: ComputeHostDescriptor, vm: VmDescriptor, instance: str | None
) -> VmConfiguration | tuple[str, str]:
    cpu_sets = vm.cpu_sets or (
        CpuSet(id=0, vcpus=tuple(range(vm.vcpus or 1)), memory_mib=vm.memory_mib or 0),
    )
    used_nodes: set[int] = set()
    placements: list[CpuSetPlacement] = []
    interfaces: list[InterfacePlacement] = []
    for index, cs in enumerate(cpu_sets):
        extra = vm.interfaces if index == 0 else ()
        last: tuple[str, str] = ("cpus", f"no NUMA node for cpu-set {cs.id}")
        chosen = None
        for node in host.numa_nodes:
            if node.id in used_nodes and not vm.cpu_sets_may_share_node:
                continue
            fit = _node_fit(node, cs, (*cs.interfaces, *extra))
            if isinstance(fit[0], str):
                last = (str(fit[0]), str(fit[1]))
                continue
            chosen = (node, fit)
            break
        if chosen is None:
            return last
        node, (pus, ifaces) = chosen
        used_nodes.add(node.id)
        pins: dict[int, int] = dict(zip(cs.vcpus, pus, strict=True))  # type: ignore[arg-type]
        placements.append(
            CpuSetPlacement(
                id=cs.id,
                numa_node=node.id,
                vcpu_pins=pins,
                memory_mib=cs.memory_mib,
                hugepages=(
                    HugepageAllocation(size_kib=cs.hugepages.size_kib, count=cs.hugepages.count)
                    if cs.hugepages is not None and cs.hugepages.count
                    else None
                ),
            )
        )
        interfaces.extend(ifaces)  # type: ignore[arg-type]
    return VmConfiguration(
        vm=vm.name,
        instance=instance,
        host=host.id,
        vcpus=sum(len(cs.vcpus) for cs in cpu_sets),
        memory_mib=sum(cs.memory_mib for cs in cpu_sets),
        cpu_sets=tuple(placements),
        interfaces=tuple(interfaces),
    )


def place(
    hosts: Sequence[ComputeHostDescriptor],
    vm_or_vnf: VmDescriptor | VnfTemplate,
    *,
    policy: str = "pack",
    seed: int = 0,
    explain: bool = False,
    **_: Any,
) -> PlacementResult:
    """First fit over `hosts` in order; a VNF's members are placed one after the other."""
    current = {h.id: h for h in hosts}
    if isinstance(vm_or_vnf, VnfTemplate):
        wanted = [
            (m.descriptor, f"{m.name}-{k}")
            for m in vm_or_vnf.members
            for k in range(m.count)
            if m.descriptor is not None
        ]
    else:
        wanted = [(vm_or_vnf, None)]
    configs: list[VmConfiguration] = []
    touched: dict[str, ComputeHostDescriptor] = {}
    for vm, instance in wanted:
        rejections: list[Rejection] = []
        for host in current.values():
            outcome = _place_vm(host, vm, instance)
            if isinstance(outcome, VmConfiguration):
                updated = claim(host, outcome)
                current[host.id] = touched[host.id] = updated
                configs.append(outcome)
                break
            reason, message = outcome
            rejections.append(Rejection(host.id, reason, message, f"lack {reason}"))
        else:
            counts: dict[str, int] = {}
            for r in rejections:
                counts[r.summary] = counts.get(r.summary, 0) + 1
            parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            summary = f"0/{len(current)} hosts fit {vm.name}" + (f": {parts}" if parts else "")
            return PlacementResult(diagnosis=Diagnosis(len(current), 0, tuple(rejections), summary))
    return PlacementResult(configurations=tuple(configs), hosts=touched)
