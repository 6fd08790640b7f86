"""An independent checker of placements, written from the descriptor spec (shares no engine code).

`violations(hosts, vm, configurations)` lists every rule a set of VM Configurations breaks against the
hosts as they were *before* placement: PUs free, eligible and on the cpu-set's node, nothing used twice,
pairs on sibling threads, isolated siblings idle, hugepages, memory, ports and VFs within what is free.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.vmd import VmDescriptor


def _cpus(host: ComputeHostDescriptor) -> dict[int, tuple[int, Any]]:
    return {cpu.id: (node.id, cpu) for node in host.numa_nodes for cpu in node.cpus}


def _floating(placement: Any, vcpus: set[int], cpus: dict[int, tuple[int, Any]]) -> list[str]:
    """A floating cpu-set: its vCPUs over shared PUs of its node, at least one PU each, within
    each PU's ratio."""
    floating = placement.floating
    if placement.vcpu_pins or floating is None or set(floating.vcpus) != vcpus:
        return [f"floating cpu-set {placement.id} placed as {placement}"]
    out = []
    if len(floating.cpus) < len(vcpus):
        out.append(f"cpu-set {placement.id}: {len(vcpus)} vCPUs over {len(floating.cpus)} PUs")
    share = len(vcpus) / max(len(floating.cpus), 1)
    for pu in floating.cpus:
        cpu = cpus.get(pu)
        if cpu is None or not cpu[1].eligible or cpu[1].state.value == "dedicated":
            out.append(f"floating PU {pu} not shareable")
            continue
        ratio = cpu[1].oversubscription_ratio or 1.0
        if cpu[1].state.value == "free" and not cpu[1].oversubscription_ratio:
            out.append(f"floating PU {pu} not in the shared pool")
        if (cpu[1].usage_ratio or 0.0) + share / ratio > 1 + 1e-9:
            out.append(f"floating PU {pu} over its ratio")
        if cpu[0] != placement.numa_node:
            out.append(f"floating PU {pu} not on node {placement.numa_node}")
    return out


def _near(
    host: ComputeHostDescriptor,
    nodes: dict[int, int],
    cpu_set: int | None,
    affinity: Any,
    node: int,
) -> bool:
    """`node` allowed by a NUMA affinity: the cpu-set's node (or any cpu-set's: `required`,
    `legacy`), a node of the same socket (`socket`), anywhere (`preferred`, or no affinity and
    no cpu-set)."""
    near = [nodes[cpu_set]] if cpu_set is not None else list(nodes.values())
    policy = affinity.value if affinity else None
    if policy == "preferred" or not nodes or (policy is None and cpu_set is None):
        return True
    if policy == "socket":
        socket = {
            n.id: frozenset({c.package for c in n.cpus})
            if len({c.package for c in n.cpus}) == 1
            else frozenset({-1 - n.id})
            for n in host.numa_nodes
        }
        return any(socket[node] == socket[n] for n in near)
    return node in near


def _devices(host: ComputeHostDescriptor, vm: VmDescriptor, config: Any) -> list[str]:
    """Every PCI device free, eligible, of a class asked, once, and where its request's NUMA
    affinity allows: the cpu-set's node (or any cpu-set's: `required`, `legacy`), a node of the
    same socket (`socket`), anywhere (`preferred`, or no affinity and no cpu-set)."""
    out = []
    devices = {d.pci_address: (n, d) for n in host.numa_nodes for d in n.pci_devices}
    nodes = {cs.id: cs.numa_node for cs in config.cpu_sets}
    if len(config.pci_devices) != sum(w.count for w in vm.pci_devices):
        out.append(f"{len(config.pci_devices)} PCI devices for {vm.pci_devices}")
    if len({d.pci_address for d in config.pci_devices}) != len(config.pci_devices):
        out.append("a PCI device given twice")
    for got in config.pci_devices:
        node, device = devices.get(got.pci_address, (None, None))
        if device is None or node is None or device.in_use or not device.eligible:
            out.append(f"PCI device {got.pci_address} not free on {host.id}")
            continue
        wants = [w for w in vm.pci_devices if str(w.device_class) == str(device.device_class)]
        ok = any(_near(host, nodes, w.cpu_set, w.numa_affinity, node.id) for w in wants)
        if not ok:
            out.append(f"PCI device {got.pci_address} on node {node.id}: not where asked")
    return out


def violations(
    hosts: list[ComputeHostDescriptor],
    vm: VmDescriptor,
    configurations: tuple[VmConfiguration, ...] | list[VmConfiguration],
) -> list[str]:
    out: list[str] = []
    by_id = {h.id: h for h in hosts}
    used_pus: dict[tuple[str, int], str] = {}
    used_pci: dict[tuple[str, str], str] = {}
    huge: dict[tuple[str, int, int], int] = defaultdict(int)
    normal: dict[tuple[str, int], int] = defaultdict(int)
    port_bw: dict[tuple[str, str], float] = defaultdict(float)
    for config in configurations:
        host = by_id.get(config.host)
        if host is None:
            out.append(f"unknown host {config.host}")
            continue
        cpus = _cpus(host)
        who = config.instance or config.vm

        def take_pu(
            pu: int,
            what: str,
            host: ComputeHostDescriptor = host,
            who: str = who,
            cpus: dict[int, tuple[int, Any]] = cpus,
        ) -> None:
            key = (host.id, pu)
            if key in used_pus:
                out.append(f"PU {pu} on {host.id} used twice ({used_pus[key]}, {who} {what})")
            used_pus[key] = who
            if pu not in cpus:
                out.append(f"PU {pu} does not exist on {host.id}")
                return
            cpu = cpus[pu][1]
            if not cpu.eligible or cpu.state.value != "free":
                out.append(f"PU {pu} on {host.id} is not free/eligible ({cpu.state})")

        if vm.processor and vm.processor.vendor and host.processor.vendor != vm.processor.vendor:
            out.append("vendor mismatch")
        if vm.processor:
            missing = set(vm.processor.required_flags) - set(host.processor.flags)
            if missing:
                out.append(f"flags missing {missing}")
        if vm.hypervisor:
            caps = set(vm.hypervisor.required_capabilities)
            have = set(host.hypervisor.capabilities) if host.hypervisor else set()
            if not caps <= have:
                out.append(f"capabilities missing {caps - have}")
        wanted = {cs.id: cs for cs in vm.cpu_sets}
        placed_ids = [cs.id for cs in config.cpu_sets]
        if vm.cpu_sets and sorted(placed_ids) != sorted(wanted):
            out.append(f"cpu-sets placed {placed_ids}, descriptor has {sorted(wanted)}")
        nodes_used = [cs.numa_node for cs in config.cpu_sets]
        if (
            vm.cpu_sets
            and not vm.cpu_sets_may_share_node
            and len(set(nodes_used)) != len(nodes_used)
        ):
            out.append(f"cpu-sets share a node: {nodes_used}")
        for placement in config.cpu_sets:
            desc = wanted.get(placement.id)
            vcpus = set(desc.vcpus) if desc else set(range(vm.vcpus or 0))
            if desc and desc.floating:
                out.extend(_floating(placement, vcpus, cpus))
            elif set(placement.vcpu_pins) != vcpus:
                out.append(f"cpu-set {placement.id} pins {sorted(placement.vcpu_pins)} not {vcpus}")
            pins = placement.vcpu_pins
            for v, pu in pins.items():
                take_pu(pu, f"vCPU {v}")
                if pu in cpus and cpus[pu][0] != placement.numa_node:
                    out.append(f"vCPU {v} on PU {pu} outside node {placement.numa_node}")
            for pu in placement.reserved_siblings:
                take_pu(pu, "reserved sibling")
            mine = set(pins.values()) | set(placement.reserved_siblings) | set(config.emulator_pins)
            if desc:
                paired = set()
                for a, b in desc.howtogroup:
                    paired |= {a, b}
                    ca, cb = cpus.get(pins.get(a, -1)), cpus.get(pins.get(b, -1))
                    if ca and cb and (ca[1].core != cb[1].core or pins[a] == pins[b]):
                        out.append(f"pair {a},{b} not on two threads of one core")
                policy = (desc.thread_policy or vm.cpu_thread_policy).value
                if policy == "require":  # the odd vCPU on a whole core, its siblings left free
                    for v in desc.vcpus:
                        if v in paired or v not in pins or pins[v] not in cpus:
                            continue
                        for sib in cpus[pins[v]][1].siblings:
                            c = cpus.get(sib)
                            if c is None or not c[1].eligible or c[1].state.value != "free":
                                out.append(f"require: odd vCPU {v} on a core with a busy thread")
                elif policy == "isolate":
                    for v in desc.vcpus:
                        if v in paired or v not in pins or pins[v] not in cpus:
                            continue
                        for sib in cpus[pins[v]][1].siblings:
                            if sib == pins[v] or sib in mine:
                                continue
                            if sib in cpus and cpus[sib][1].eligible:
                                out.append(f"isolated vCPU {v}: sibling {sib} not kept idle")
                if desc.hugepages and desc.hugepages.choice:
                    hp = placement.hugepages
                    held = hp.count * hp.size_kib if hp else 0
                    if held not in (0, desc.memory_mib * 1024) or (
                        hp is None and desc.hugepages.choice.value != "any"
                    ):
                        out.append(f"cpu-set {placement.id} pages {hp} for size word")
                elif desc.hugepages and desc.hugepages.count:
                    hp = placement.hugepages
                    if (
                        hp is None
                        or hp.count != desc.hugepages.count
                        or hp.size_kib != desc.hugepages.size
                    ):
                        out.append(f"cpu-set {placement.id} hugepages {hp} not as described")
                if placement.memory_mib != desc.memory_mib:
                    out.append(f"cpu-set {placement.id} memory {placement.memory_mib}")
            if placement.hugepages:
                huge[(host.id, placement.numa_node, placement.hugepages.size_kib)] += (
                    placement.hugepages.count
                )
            normal[(host.id, placement.numa_node)] += placement.memory_mib - (
                placement.hugepages.count * placement.hugepages.size_kib // 1024
                if placement.hugepages
                else 0
            )
        for pu in config.emulator_pins:
            take_pu(pu, "emulator")
            first = config.cpu_sets[0].numa_node if config.cpu_sets else None
            if pu in cpus and cpus[pu][0] != first:
                out.append(f"emulator PU {pu} not on the node of the first cpu-set ({first})")
        if (
            vm.emulator_threads.value == "isolate"
            and vm.cpu_sets
            and len(config.emulator_pins) != 1
        ):
            out.append(f"emulator PUs {config.emulator_pins}, expected one")
        if config.shared is not None:
            share = config.shared.vcpus / max(len(config.shared.cpus), 1)
            for pu in config.shared.cpus:
                cpu = cpus.get(pu)
                if cpu is None or not cpu[1].eligible or cpu[1].state.value == "dedicated":
                    out.append(f"shared PU {pu} not shareable")
                    continue
                ratio = cpu[1].oversubscription_ratio or 1.0
                if (cpu[1].usage_ratio or 0.0) + share / ratio > 1 + 1e-9:
                    out.append(f"shared PU {pu} over its ratio")
                if config.shared.numa_node is not None and cpu[0] != config.shared.numa_node:
                    out.append(f"shared PU {pu} not on node {config.shared.numa_node}")
            if not vm.cpu_oversubscription:
                out.append("shared PUs for a VM that does not allow oversubscription")
            if len(config.shared.cpus) < config.shared.vcpus:
                out.append(f"{config.shared.vcpus} shared vCPUs over {len(config.shared.cpus)} PUs")
        elif vm.cpu_oversubscription and not vm.cpu_sets:
            out.append("oversubscribed plain VM placed without shared PUs")
        out.extend(_devices(host, vm, config))
        ports = {
            port.pci_address: (node.id, port)
            for node in host.numa_nodes
            for nic in node.nics
            for port in nic.ports
        }
        vfs = {vf.pci_address: (addr, vf) for addr, (_, port) in ports.items() for vf in port.vfs}
        ifaces = {i.name: (cs.id, i) for cs in vm.cpu_sets for i in cs.interfaces}
        ifaces.update({i.name: (None, i) for i in vm.interfaces})
        placed_ifaces = {i.name: i for i in config.interfaces}
        if set(placed_ifaces) != set(ifaces):
            out.append(f"interfaces {sorted(placed_ifaces)} not {sorted(ifaces)}")
        cs_node = {cs.id: cs.numa_node for cs in config.cpu_sets}
        for name, (cs_id, iface) in ifaces.items():
            got = placed_ifaces.get(name)
            if got is None:
                continue
            if iface.mode.value == "vswitch":
                if host.hypervisor is None or host.hypervisor.vswitch is None:
                    out.append(f"{name}: no vSwitch")
                continue
            address = got.pci_address or ""
            key = (host.id, address)
            if key in used_pci:
                out.append(f"{address} used twice")
            used_pci[key] = who
            if iface.mode.value == "dedicated":
                if address not in ports:
                    out.append(f"{name}: {address} is not a port")
                    continue
                node_id, port = ports[address]
                if (
                    not port.eligible
                    or port.usage.value != "free"
                    or any(v.in_use for v in port.vfs)
                ):
                    out.append(f"{name}: port {address} not free")
                if (host.id, "port:" + address) in used_pci:
                    out.append(f"{name}: port {address} also serves VFs")
                used_pci[(host.id, "port:" + address)] = who
            else:
                if address not in vfs:
                    out.append(f"{name}: {address} is not a VF")
                    continue
                pf, vf = vfs[address]
                node_id, port = ports[pf]
                if vf.in_use or not port.eligible or port.usage.value not in ("free", "sriov"):
                    out.append(f"{name}: VF {address} not free")
                port_bw[(host.id, pf)] += iface.bandwidth_gbps or 0.0
                if port_bw[(host.id, pf)] > port.speed_gbps - port.bandwidth_used_gbps + 1e-6:
                    out.append(f"{name}: port {pf} bandwidth exceeded")
                previous = used_pci.get((host.id, "port:" + pf))
                if previous not in (None, "vf"):
                    out.append(f"{name}: port {pf} given whole elsewhere")
                used_pci[(host.id, "port:" + pf)] = "vf"
            if (iface.speed_gbps or 0) > port.speed_gbps:
                out.append(f"{name}: port speed {port.speed_gbps} < {iface.speed_gbps}")
            if iface.numa_affinity is not None:
                if not _near(host, cs_node, cs_id, iface.numa_affinity, node_id):
                    out.append(f"{name}: on node {node_id}, not {iface.numa_affinity} to the VM")
            elif (
                cs_id is not None and iface.restricted_to_topology and node_id != cs_node.get(cs_id)
            ):
                out.append(f"{name}: on node {node_id}, cpu-set {cs_id} elsewhere")
    for (host_id, node_id, size), count in huge.items():
        node = by_id[host_id].node(node_id)
        pool = node.memory.pool(size)
        free = pool.free if pool else 0
        if count > free:
            out.append(f"{host_id} node {node_id}: {count} pages of {size} KiB, {free} free")
    for (host_id, node_id), mib in normal.items():
        memory = by_id[host_id].node(node_id).memory
        free = memory.normal_total_mib - memory.normal.reserved_mib - memory.normal.used_mib
        if mib > free:
            out.append(f"{host_id} node {node_id}: {mib} MiB normal memory, {free} free")
    return out
