"""The topology from sysfs alone, for a `--sysfs-root` tree or when hwloc cannot run.

Reads `/sys/devices/system/cpu/cpu*/topology` (package, core, siblings), `node*/cpulist` and
`node*/meminfo`, and the PCI functions behind `/sys/class/net/*` (class, vendor, device, NUMA node),
their VFs included. Only what placement needs; hwloc remains the preferred source on a live host.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .facts import NetDevice
from .hwtopo import HwNode, HwPciFunction, HwPu, HwTopology
from .sysfs import node_ids, parse_cpulist, read_int, read_node_memory_kib, read_text

_CPU_DIR = re.compile(r"^cpu(\d+)$")


def _hex_attr(path: Path) -> str | None:
    text = read_text(path)
    if text is None:
        return None
    text = text.strip().lower().removeprefix("0x")
    return text if re.fullmatch(r"[0-9a-f]{1,6}", text) else None


def _pci_function(
    root: Path, address: str, locality: tuple[int, ...], netdevs: tuple[str, ...]
) -> HwPciFunction:
    base = root / "sys/bus/pci/devices" / address
    klass = _hex_attr(base / "class") or "020000"
    vendor = (_hex_attr(base / "vendor") or "0000").zfill(4)
    device = (_hex_attr(base / "device") or "0000").zfill(4)
    numa = read_int(base / "numa_node")
    if numa is not None and numa >= 0:
        locality = (numa,)
    return HwPciFunction(
        busid=address.lower(),
        class_id=int(klass.zfill(6)[:4], 16),
        vendor_id=vendor[-4:],
        device_id=device[-4:],
        netdevs=netdevs,
        osdevs=netdevs,
        locality=locality,
    )


def sysfs_topology(root: Path, netdevs: tuple[NetDevice, ...] = ()) -> HwTopology | None:
    """The topology a sysfs tree shows, or None when it has no CPU topology at all."""
    cpu_base = root / "sys/devices/system/cpu"
    try:
        names = os.listdir(cpu_base)
    except OSError:
        return None
    cpu_ids = sorted(int(m.group(1)) for n in names if (m := _CPU_DIR.match(n)))
    if not cpu_ids:
        return None
    nodes = node_ids(root)
    node_of: dict[int, int] = {}
    for node in nodes:
        text = read_text(root / f"sys/devices/system/node/node{node}/cpulist")
        for cpu in parse_cpulist(text or ""):
            node_of.setdefault(cpu, node)
    online_text = read_text(cpu_base / "online")
    online = parse_cpulist(online_text) if online_text else frozenset(cpu_ids)
    core_keys: dict[tuple[int, int], int] = {}
    packages: list[int] = []
    pus: list[HwPu] = []
    for cpu in cpu_ids:
        topo = cpu_base / f"cpu{cpu}/topology"
        package = read_int(topo / "physical_package_id")
        core_id = read_int(topo / "core_id")
        if package is not None and package not in packages:
            packages.append(package)
        key = (package if package is not None else -1, core_id if core_id is not None else -1 - cpu)
        core = core_keys.setdefault(key, len(core_keys))
        pus.append(HwPu(cpu, core, package, node_of.get(cpu), cpu in online))
    memory = read_node_memory_kib(root)
    hw_nodes = tuple(
        HwNode(os_index=n, memory_bytes=memory[n] * 1024 if n in memory else None) for n in nodes
    ) or (HwNode(os_index=0, memory_bytes=None),)
    if not nodes:
        pus = [HwPu(p.os_index, p.core, p.package, 0, p.allowed) for p in pus]
    functions: dict[str, HwPciFunction] = {}
    for dev in netdevs:
        if dev.pci_address is None:
            continue
        locality = (dev.numa_node,) if dev.numa_node is not None else ()
        functions.setdefault(
            dev.pci_address, _pci_function(root, dev.pci_address, locality, (dev.name,))
        )
        for vf in dev.vfs:
            if vf not in functions:
                functions[vf] = _pci_function(root, vf, locality, ())
    return HwTopology(
        version="sysfs",
        pus=tuple(pus),
        nodes=hw_nodes,
        packages=tuple(packages),
        core_count=len(core_keys),
        pci=tuple(functions[a] for a in sorted(functions)),
    )
