"""A first-fit greedy placer, like Nova's `numa_fit_instance_to_host`: host by host, node by node,
the first node whose free counts fit each cpu-set in turn, then PUs picked the way Nova's
`_pack_instance_onto_cores` does (cores with the most free threads first; `isolate` takes whole cores;
pairs take whole cores). Hugepages, memory and one VF per interface on the same node. Written for the
benchmark only: it produces VM Configurations and updates hosts with `claims.claim`, so both
placers are measured on the same representation.
"""

from __future__ import annotations

from collections.abc import Sequence

from nfvplace.claims import claim
from nfvplace.models.chd import ComputeHostDescriptor, CpuState, NumaNode, PortUsage
from nfvplace.models.configuration import (
    CpuSetPlacement,
    HugepageAllocation,
    InterfacePlacement,
    SharedCpus,
    VmConfiguration,
)
from nfvplace.models.vmd import CpuSet, ThreadPolicy, VmDescriptor


def _free_cores(node: NumaNode, host: ComputeHostDescriptor) -> list[list[int]]:
    """Free eligible threads grouped by core, cores with the most free threads first (Nova)."""
    cpus = {c.id: c for c in host.cpus}
    cores: dict[int, list[int]] = {}
    for cpu in node.cpus:
        if cpu.eligible and cpu.state is CpuState.free:
            cores.setdefault(cpu.core, []).append(cpu.id)
    out = []
    for core, free in cores.items():
        whole = all(
            s in cpus and cpus[s].eligible and cpus[s].state is CpuState.free
            for s in cpus[free[0]].siblings
        )
        out.append((0 if whole and len(free) > 1 else 1, core, sorted(free)))
    out.sort(key=lambda t: (-len(t[2]), t[1]))
    return [free for _, _, free in out]


def _fit_cpu_set(
    host: ComputeHostDescriptor, node: NumaNode, cs: CpuSet, policy: ThreadPolicy, taken: set[int]
) -> tuple[dict[int, int], list[int]] | None:
    cores = [[t for t in c if t not in taken] for c in _free_cores(node, host)]
    whole = [c for c in cores if len(c) >= 2]
    pins: dict[int, int] = {}
    reserved: list[int] = []
    pairs = list(cs.howtogroup)
    singles = list(cs.single_vcpus)
    if len(whole) < len(pairs):
        return None
    for a, b in pairs:
        core = whole.pop(0)
        cores.remove(core)
        pins[a], pins[b] = core[0], core[1]
    if policy is ThreadPolicy.prefer:
        threads = [t for c in cores for t in c]
        if len(threads) < len(singles):
            return None
        for v, t in zip(singles, threads, strict=False):
            pins[v] = t
    else:
        if len(whole) < len(singles):
            return None
        for v in singles:
            core = whole.pop(0)
            pins[v] = core[0]
            reserved.extend(core[1:])
    return pins, reserved


def first_fit(
    hosts: Sequence[ComputeHostDescriptor], vm: VmDescriptor
) -> tuple[VmConfiguration, ComputeHostDescriptor] | None:
    if not vm.cpu_sets and vm.cpu_oversubscription:
        return _shared(hosts, vm)
    cpu_sets = vm.cpu_sets or (
        CpuSet(id=0, vcpus=tuple(range(vm.vcpus or 1)), memory_mib=vm.memory_mib or 0),
    )
    policy = vm.cpu_thread_policy if vm.cpu_sets else ThreadPolicy.prefer
    emulator = vm.emulator_threads.value == "isolate"
    for host in hosts:
        emulator_pu: int | None = None
        placements = []
        interfaces = []
        used_nodes: set[int] = set()
        used_vfs: set[str] = set()
        for cs in cpu_sets:
            fitted = None
            for node in host.numa_nodes:
                if node.id in used_nodes:
                    continue
                hp = cs.hugepages
                if hp and hp.count:
                    pool = node.memory.pool(hp.size)
                    if pool is None or pool.free < hp.count:
                        continue
                normal = cs.memory_mib - (hp.total_mib if hp else 0)
                if node.memory.normal_free_mib < normal:
                    continue
                ifaces = []
                ok = True
                for iface in cs.interfaces:
                    vf = next(
                        (
                            (port, v)
                            for port in node.ports
                            if port.eligible
                            and port.usage in (PortUsage.free, PortUsage.sriov)
                            and port.speed_gbps >= (iface.speed_gbps or 0)
                            and port.bandwidth_free_gbps >= (iface.bandwidth_gbps or 0)
                            for v in port.vfs
                            if not v.in_use and v.pci_address not in used_vfs
                        ),
                        None,
                    )
                    if vf is None:
                        ok = False
                        break
                    used_vfs.add(vf[1].pci_address)
                    ifaces.append(
                        InterfacePlacement(
                            name=iface.name,
                            cpu_set=cs.id,
                            mode=iface.mode,
                            pci_address=vf[1].pci_address,
                            physical_function=vf[0].pci_address,
                            numa_node=node.id,
                            bandwidth_gbps=iface.bandwidth_gbps or 0.0,
                        )
                    )
                if not ok:
                    continue
                cpu = _fit_cpu_set(host, node, cs, cs.thread_policy or policy, set())
                if cpu is None:
                    continue
                if emulator and not placements:
                    # Nova's hw:emulator_threads_policy=isolate: one more dedicated PU on cell 0
                    spare = [
                        t
                        for core in _free_cores(node, host)
                        for t in core
                        if t not in cpu[0].values() and t not in cpu[1]
                    ]
                    if not spare:
                        continue
                    emulator_pu = spare[0]
                fitted = (node, cpu, ifaces)
                break
            if fitted is None:
                break
            node, (pins, reserved), ifaces = fitted
            used_nodes.add(node.id)
            interfaces.extend(ifaces)
            placements.append(
                CpuSetPlacement(
                    id=cs.id,
                    numa_node=node.id,
                    vcpu_pins=pins,
                    memory_mib=cs.memory_mib,
                    hugepages=HugepageAllocation(
                        size_kib=cs.hugepages.size, count=cs.hugepages.count
                    )
                    if cs.hugepages and cs.hugepages.count
                    else None,
                    reserved_siblings=tuple(reserved),
                )
            )
        else:
            config = VmConfiguration(
                vm=vm.name,
                instance=f"{vm.name}@{host.id}",
                host=host.id,
                cpu_sets=tuple(placements),
                interfaces=tuple(interfaces),
                emulator_pins=(emulator_pu,) if emulator_pu is not None else (),
            )
            return config, claim(host, config)
    return None


def _shared(
    hosts: Sequence[ComputeHostDescriptor], vm: VmDescriptor
) -> tuple[VmConfiguration, ComputeHostDescriptor] | None:
    vcpus = vm.vcpus or 1
    for host in hosts:
        for node in host.numa_nodes:
            pool = [
                c
                for c in node.cpus
                if c.eligible
                and c.state is CpuState.shared
                and (1 - (c.usage_ratio or 0)) * (c.oversubscription_ratio or 1) >= vcpus / 2
            ][:2]
            if len(pool) < 2 or node.memory.normal_free_mib < (vm.memory_mib or 0):
                continue
            config = VmConfiguration(
                vm=vm.name,
                instance=f"{vm.name}@{host.id}",
                host=host.id,
                shared=SharedCpus(
                    vcpus=vcpus,
                    cpus=tuple(c.id for c in pool),
                    numa_node=node.id,
                    memory_mib=vm.memory_mib or 0,
                    oversubscribed=True,
                ),
            )
            return config, claim(host, config)
    return None
