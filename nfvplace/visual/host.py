"""A host drawn the way `lstopo` draws it: machine, packages, NUMA nodes, cores with their threads,
hugepage pools per size, NICs with their ports and VFs, every part coloured by its state, and the VMs
placed on it overlaid (which vCPU sits on which PU, which port or VF serves which interface).

`host_svg(host, configurations)` is pure: descriptors in, SVG text out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..models.chd import ComputeHostDescriptor, Cpu, Nic, NumaNode, PciDevice, Port
from ..models.configuration import VmConfiguration
from .overlay import Mark, Overlay, overlay, size_label
from .svg import (
    CORE_FILL,
    MACHINE_FILL,
    NIC_FILL,
    NODE_FILL,
    PACKAGE_FILL,
    STATE_FILL,
    Box,
    document,
    fit_line,
    fit_lines,
    flow,
    group,
    rect,
    text,
    vm_colour,
)

PU_W, PU_H, GAP, PAD = 34.0, 24.0, 3.0, 6.0
CORE_HEAD = 10.0
VF = 9.0
PORT_W = 132.0
MAX_WIDTH = 1800.0


def cpu_state(cpu: Cpu) -> str:
    return "ineligible" if not cpu.eligible else str(cpu.state)


def port_state(port: Port) -> str:
    if not port.eligible:
        return "ineligible"
    return {"free": "free", "dedicated": "dedicated"}.get(str(port.usage), "shared")


def _fill(state: str, mark: Mark | None) -> str:
    return vm_colour(mark.vm) if mark else STATE_FILL[state]


def _pu(cpu: Cpu, marks: Overlay) -> Box:
    state = cpu_state(cpu)
    mark = marks.pus.get(cpu.id)
    tip = f"PU {cpu.id} (core {cpu.core}): {state}"
    if cpu.owner:
        tip += f", owner {cpu.owner}"
    if state == "shared" and cpu.oversubscription_ratio:
        tip += f", ratio {cpu.oversubscription_ratio:g}, usage {cpu.usage_ratio or 0:.0%}"
    if mark:
        tip += f"; {mark.detail}"
    ink = "#ffffff" if mark else "#000000"
    parts = [
        rect(0, 0, PU_W, PU_H, _fill(state, mark), title=tip),
        text(PU_W / 2, 9, f"P#{cpu.id}", size=7.5, anchor="middle", fill=ink),
    ]
    if mark:
        parts.append(
            text(PU_W / 2, 20, mark.label, size=8, anchor="middle", fill=ink, weight="bold")
        )
    floating = marks.shared_pus.get(cpu.id, ())
    parts += _floating_stripes(floating, marks)
    classes = f"pu {state}" + (f" vm vm-{mark.vm}" if mark else "")
    classes += "".join(f" vm-shared vm-{k}" for k in floating)
    svg = group(parts, id=f"{marks.prefix}pu-{cpu.id}", class_=classes, data_owner=cpu.owner)
    return Box(svg, PU_W, PU_H)


def _floating_stripes(vms: Sequence[int], marks: Overlay) -> list[str]:
    """One stripe per VM whose floating vCPUs may run on a shared PU, in the VM's colour (the
    PU stays amber: other VMs share it too)."""
    width = PU_W / max(len(vms), 1)
    return [
        rect(
            j * width,
            PU_H - 5,
            width,
            5,
            vm_colour(k),
            title=f"{marks.vms[k].owner}: floating vCPUs may run here",
            stroke="none",
        )
        for j, k in enumerate(vms)
    ]


def _core(core: int, cpus: Sequence[Cpu], marks: Overlay) -> Box:
    width = 2 * GAP + len(cpus) * PU_W + (len(cpus) - 1) * GAP
    height = CORE_HEAD + PU_H + GAP
    parts = [rect(0, 0, width, height, CORE_FILL, stroke="#666666")]
    parts.append(text(GAP, 8, f"Core {core}", size=7))
    for k, cpu in enumerate(cpus):
        parts.append(_pu(cpu, marks).at(GAP + k * (PU_W + GAP), CORE_HEAD))
    return Box(group(parts, class_="core"), width, height)


def _cores(node: NumaNode, marks: Overlay) -> list[Box]:
    by_core: dict[int, list[Cpu]] = {}
    for cpu in sorted(node.cpus, key=lambda c: c.id):
        by_core.setdefault(cpu.core, []).append(cpu)
    return [_core(core, cpus, marks) for core, cpus in by_core.items()]


def _pool_bar(node: NumaNode, marks: Overlay, width: float) -> Box:
    """One bar per hugepage size: used by other VMs, used by each overlaid VM, free."""
    parts: list[str] = []
    y = 0.0
    for pool in node.memory.hugepages:
        if pool.total == 0:
            continue
        mine = marks.hugepages.get((node.id, pool.size_kib), ())
        label = f"{size_label(pool.size_kib)} pages: {pool.free} free of {pool.total}"
        parts.append(text(0, y + 9, label, size=8.5))
        y += 12
        parts.append(rect(0, y, width, 10, STATE_FILL["free"], title=label))
        others = max(pool.used - sum(count for _, count in mine), 0)
        x = 0.0
        segments = [(STATE_FILL["dedicated"], others, "other VMs")] + [
            (vm_colour(k), count, marks.vms[k].owner) for k, count in mine
        ]
        for fill, count, who in segments:
            w = width * count / pool.total
            if w > 0:
                parts.append(rect(x, y, w, 10, fill, title=f"{count} pages: {who}"))
            x += w
        y += 14
    return Box(group(parts, class_="hugepages"), width, y)


def _port(port: Port, marks: Overlay, width: float) -> Box:
    state = port_state(port)
    mark = marks.devices.get(port.pci_address)
    name = port.name or port.pci_address
    tip = f"port {port.pci_address} {port.speed_gbps:g} Gb/s: {port.usage}"
    if mark:
        tip += f"; {mark.detail}"
    ink = "#ffffff" if mark else "#000000"
    label = f"{name} {port.speed_gbps:g}G" + (f" {mark.label}" if mark else "")
    parts = [
        group(
            [
                rect(0, 0, PORT_W, 16, _fill(state, mark), title=tip),
                text(3, 11.5, label, size=8, fill=ink),
            ],
            id=f"{marks.prefix}dev-{port.pci_address}",
            class_=f"port {state}" + (f" vm vm-{mark.vm}" if mark else ""),
        )
    ]
    per_row = max(int((width - PORT_W - GAP) // (VF + 2)), 1)
    for k, vf in enumerate(port.vfs):
        vf_state = "ineligible" if not port.eligible else "dedicated" if vf.in_use else "free"
        vf_mark = marks.devices.get(vf.pci_address)
        x = PORT_W + GAP + (k % per_row) * (VF + 2)
        y = (k // per_row) * (VF + 2)
        tip = f"VF {vf.pci_address}: {vf_state}" + (f", owner {vf.owner}" if vf.owner else "")
        if vf_mark:
            tip += f"; {vf_mark.detail}"
        parts.append(
            group(
                [rect(x, y, VF, VF, _fill(vf_state, vf_mark), title=tip)],
                id=f"{marks.prefix}dev-{vf.pci_address}",
                class_=f"vf {vf_state}" + (f" vm vm-{vf_mark.vm}" if vf_mark else ""),
            )
        )
    rows = -(-len(port.vfs) // per_row)
    return Box("".join(parts), width, max(16.0, rows * (VF + 2)))


def _nic(nic: Nic, marks: Overlay, width: float) -> Box:
    label = fit_lines(f"NIC {nic.vendor} {nic.model}", width - 2 * PAD, 8.5, bold=True)
    parts = [
        text(PAD, 11 + 10.5 * k, line, size=8.5, weight="bold") for k, line in enumerate(label)
    ]
    y = 5.5 + 10.5 * len(label)
    for port in nic.ports:
        box = _port(port, marks, width - 2 * PAD)
        parts.append(box.at(PAD, y))
        y += box.height + GAP
    height = y + PAD - GAP
    return Box(
        rect(0, 0, width, height, NIC_FILL, stroke="#888888") + "".join(parts), width, height
    )


def _device(device: PciDevice, width: float, prefix: str) -> Box:
    state = "ineligible" if not device.eligible else "dedicated" if device.in_use else "free"
    label = f"{device.device_class} {device.pci_address} {device.model or ''}".strip()
    tip = label + (f", owner {device.owner}" if device.owner else "")
    svg = group(
        [
            rect(0, 0, width, 16, STATE_FILL[state], title=tip),
            text(3, 11.5, fit_line(label, width - 6, 8), size=8),
        ],
        id=f"{prefix}dev-{device.pci_address}",
        class_=f"pcidev {state}",
    )
    return Box(svg, width, 16)


def _node(node: NumaNode, marks: Overlay, cores_per_row: int) -> Box:
    cores = _cores(node, marks)
    core_w = max((c.width for c in cores), default=PU_W)
    grid = flow(cores, cores_per_row * (core_w + GAP), GAP)
    inner = max(grid.width, 300.0)
    memory = node.memory
    size = f"{memory.total_mib / 1024:.0f} GiB" if memory.total_mib else "memory size unknown"
    head = f"NUMANode {node.id} ({size})"
    normal = (
        f"normal memory: {memory.normal_free_mib / 1024:.1f} GiB free of"
        f" {memory.normal_total_mib / 1024:.1f}"
        if memory.total_mib
        else ""
    )
    parts = [text(PAD, 13, head, size=10.5, weight="bold"), text(PAD, 26, normal, size=8.5)]
    y = 32.0
    pools = _pool_bar(node, marks, inner)
    parts.append(pools.at(PAD, y))
    y += pools.height + GAP
    parts.append(grid.at(PAD, y))
    y += grid.height + PAD
    for nic in node.nics:
        box = _nic(nic, marks, inner)
        parts.append(box.at(PAD, y))
        y += box.height + GAP
    for device in node.pci_devices:
        parts.append(_device(device, inner, marks.prefix).at(PAD, y))
        y += 16 + GAP
    width, height = inner + 2 * PAD, y + PAD
    body = rect(0, 0, width, height, NODE_FILL, stroke="#5a7a1a") + "".join(parts)
    return Box(group([body], id=f"{marks.prefix}numa-{node.id}", class_="numa"), width, height)


def _package_of(node: NumaNode) -> int | None:
    counts = Counter(cpu.package for cpu in node.cpus)
    return counts.most_common(1)[0][0] if counts else None


def _packages(host: ComputeHostDescriptor, marks: Overlay) -> list[Box]:
    cores = max((len({c.core for c in n.cpus}) for n in host.numa_nodes), default=1)
    per_row = 8 if cores <= 64 else 12
    groups: dict[int | None, list[NumaNode]] = {}
    for node in host.numa_nodes:
        groups.setdefault(_package_of(node), []).append(node)
    boxes = []
    for package, nodes in groups.items():
        inner = flow([_node(n, marks, per_row) for n in nodes], MAX_WIDTH - 4 * PAD, PAD)
        label = (
            "Memory-only NUMA nodes"
            if package is None and not nodes[0].cpus
            else (f"Package {package}" if package is not None else "Package")
        )
        width, height = inner.width + 2 * PAD, inner.height + 20 + PAD
        svg = (
            rect(0, 0, width, height, PACKAGE_FILL, stroke="#777777")
            + text(PAD, 13, label, size=10.5, weight="bold")
            + inner.at(PAD, 20)
        )
        boxes.append(Box(group([svg], class_="package"), width, height))
    return boxes


def _legend(marks: Overlay, width: float) -> Box:
    parts: list[str] = []
    x = 0.0
    for state in ("free", "ineligible", "dedicated", "shared"):
        parts.append(rect(x, 0, 12, 12, STATE_FILL[state]))
        parts.append(text(x + 16, 10, state, size=9))
        x += 90
    y = 20.0
    for k, vm in enumerate(marks.vms):
        parts.append(
            group(
                [
                    rect(0, y, 12, 12, vm.colour),
                    text(16, y + 10, f"{vm.owner} (VM {vm.vm})", size=9.5, weight="bold"),
                ],
                class_=f"legend-vm vm-{k}",
            )
        )
        y += 15
        for line in vm.lines:
            parts.append(text(24, y + 9, line, size=8.5))
            y += 12
        y += 4
    return Box(group(parts, class_="legend"), width, y)


def _machine(
    host: ComputeHostDescriptor, configurations: Sequence[VmConfiguration], prefix: str = ""
) -> Box:
    marks = overlay(host, configurations, prefix)
    drawn = marks.host
    packages = flow(_packages(drawn, marks), MAX_WIDTH, PAD)
    head = (
        f"Machine {drawn.id}: {drawn.processor.model}, {len(drawn.numa_nodes)} NUMA nodes,"
        f" {len(drawn.cpus)} PUs"
    )
    legend = _legend(marks, packages.width)
    width = max(packages.width, 380.0) + 2 * PAD
    top = 22.0
    body = [
        rect(0, 0, width, top + packages.height + PAD, MACHINE_FILL, stroke="#555555"),
        text(PAD, 15, head, size=11.5, weight="bold"),
        packages.at(PAD, top),
        legend.at(PAD, top + packages.height + 2 * PAD),
    ]
    height = top + packages.height + PAD + legend.height + 2 * PAD
    return Box(group(body, class_="machine", data_host=drawn.id), width, height)


def host_svg(host: ComputeHostDescriptor, configurations: Sequence[VmConfiguration] = ()) -> str:
    """An SVG picture of `host` with `configurations` (VMs placed on it) overlaid.

    A configuration whose resources the descriptor does not show as held yet is claimed first (a host
    file written before placement); one for another host raises `NfvplaceError`.
    """
    box = _machine(host, configurations)
    title = f"host {host.id}" + (f" with {len(configurations)} VMs" if configurations else "")
    return document(box.width + 2, box.height + 2, [box.at(1, 1)], title=title)


def hosts_svg(
    hosts: Sequence[ComputeHostDescriptor],
    configurations: Sequence[VmConfiguration] = (),
    *,
    title: str = "hosts",
) -> str:
    """Several hosts one under the other, each with the configurations placed on it. Element ids of
    the second host on carry a prefix (`h1-pu-3`) so that they stay unique in the document."""
    boxes = [
        _machine(h, [c for c in configurations if c.host == h.id], f"h{k}-" if k else "")
        for k, h in enumerate(hosts)
    ]
    stacked = flow(boxes, 0.0, 2 * PAD)
    return document(stacked.width + 2, stacked.height + 2, [stacked.at(1, 1)], title=title)
