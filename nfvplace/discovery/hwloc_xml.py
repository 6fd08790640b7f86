"""Reading hwloc XML exports (v2, and the v3 that hwloc 3 / pyhwloc writes) without hwloc.

This is the robust path: a plain, safe XML parse (no network, no DTD, no entity expansion, bounded
size and depth) that never crashes on a topology file, whatever hwloc's own loader would do with it
(pyhwloc 3.0.1 segfaults on `<distances2>` without a `name`). Every problem becomes a
`DiscoveryError` naming the file and what is wrong.

What is read: NUMA nodes (memory, `page_type` pools), packages, cores, PUs and the root's
`allowed_cpuset`/`allowed_nodeset` (a cgroup-restricted export keeps the disallowed PUs; we keep them
too and `build.py` marks them ineligible), PCI functions with their locality (the nodeset of the
closest non-I/O ancestor), OS devices, caches, `<distances2>` NUMA latencies and the info pairs.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from lxml import etree

from .hwloc_objects import ObjectRecords, bitmap_attr, infos_of, walk_objects
from .hwtopo import Cache, HwL3, HwNode, HwPciFunction, HwPu, HwTopology
from .xml_input import MAX_XML_BYTES, read_hwloc_xml_bytes, safe_root, xml_failure

_HEX4 = re.compile(r"^[0-9a-f]{4}$")
_BUSID = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
# OS device types: hwloc 2 numbers them, hwloc 3 uses bit flags.
V2_OSDEV_NETWORK = 2
V3_OSDEV_NETWORK = 1 << 4


def parse_hwloc_xml(data: bytes, source: str = "<hwloc-xml>") -> HwTopology:
    """Parse hwloc XML bytes into the neutral topology; raises DiscoveryError, never crashes."""
    root = safe_root(data, source)
    version = _version(root, source)
    v3 = version.startswith("3")
    machine = _machine(root, source)
    records = _records(root, machine, source)
    nodes = _numa_nodes(records, machine, source)
    node_cpusets = {os: cs or 0 for os, _, _, _, cs in records.nodes}
    gp_of_node = _gp_of_node(machine)
    pus = _pus(records, machine, nodes, node_cpusets)
    return HwTopology(
        version=version,
        pus=pus,
        nodes=tuple(nodes),
        packages=tuple(records.packages),
        core_count=len({p.core for p in pus}),
        pci=_pci_functions(records, nodes, node_cpusets, v3),
        distances=_distances(root, nodes, gp_of_node, source),
        info=dict(records.info),
        caches=tuple(
            Cache(level, kind, size) for (level, kind), size in sorted(records.caches.items())
        ),
        page_sizes=_page_sizes(nodes, records.info),
        l3=tuple(
            HwL3(
                index, ways, size, tuple(n for n in range(nodeset.bit_length()) if nodeset >> n & 1)
            )
            for index, ways, size, nodeset in records.l3
        ),
    )


def parse_hwloc_xml_file(path: str | Path) -> HwTopology:
    """Read and parse one hwloc XML export."""
    return parse_hwloc_xml(read_hwloc_xml_bytes(path), str(path))


def _version(root: etree._Element, source: str) -> str:
    if root.tag != "topology":
        raise xml_failure(
            source,
            f"the root element is <{root.tag}>, not <topology>: this is not an hwloc XML export",
            hint="give a file written by `lstopo --of xml`",
        )
    version = root.get("version")
    if version is None or version.split(".")[0] not in {"2", "3"}:
        raise xml_failure(
            source,
            f"hwloc XML version {version or '1.x (no version attribute)'} is not supported; "
            "versions 2 and 3 are",
            hint="convert it with hwloc 2: `lstopo -i FILE --of xml new.xml`",
        )
    return version


def _machine(root: etree._Element, source: str) -> etree._Element:
    machines = [child for child in root if child.tag == "object"]
    if len(machines) != 1:
        raise xml_failure(
            source, f"<topology> must hold exactly one root <object>, found {len(machines)}"
        )
    return machines[0]


def _records(root: etree._Element, machine: etree._Element, source: str) -> ObjectRecords:
    records = ObjectRecords(source=source)
    records.info.update(infos_of(machine))
    for child in root:
        if child.tag == "info" and child.get("name") and child.get("value") is not None:
            records.info.setdefault(str(child.get("name")), str(child.get("value")))
    try:
        walk_objects(machine, records, None, None, None, "")
    except RecursionError:
        raise xml_failure(source, "the object tree is nested too deeply") from None
    if not records.pus:
        raise xml_failure(
            source, "the topology has no PU objects", hint="export with the CPU objects kept"
        )
    return records


def _numa_nodes(records: ObjectRecords, machine: etree._Element, source: str) -> list[HwNode]:
    nodes = sorted(
        (
            HwNode(os_index=os, memory_bytes=mem, page_types=pages, subtype=subtype)
            for os, mem, pages, subtype, _ in records.nodes
        ),
        key=lambda n: n.os_index,
    )
    if len({n.os_index for n in nodes}) != len(nodes):
        raise xml_failure(source, "two NUMANode objects share an os_index")
    allowed_nodeset = bitmap_attr(machine, "allowed_nodeset", source)
    if allowed_nodeset is not None:
        nodes = [
            HwNode(
                n.os_index,
                n.memory_bytes,
                n.page_types,
                n.subtype,
                bool(allowed_nodeset >> n.os_index & 1),
            )
            for n in nodes
        ]
    if not nodes:  # hwloc 2 always has one; be lenient with hand-made files
        nodes = [HwNode(os_index=0, memory_bytes=None)]
    return nodes


def _gp_of_node(machine: etree._Element) -> dict[int, int]:
    """Each NUMA node's gp_index (by os_index), for distances indexed by gp_index."""
    gp_of_node: dict[int, int] = {}
    for element in machine.iter("object"):
        if (
            element.get("type") == "NUMANode"
            and element.get("gp_index")
            and element.get("os_index")
        ):
            with contextlib.suppress(ValueError):
                gp_of_node[int(element.get("os_index", ""))] = int(element.get("gp_index", ""))
    return gp_of_node


def _pus(
    records: ObjectRecords,
    machine: etree._Element,
    nodes: list[HwNode],
    node_cpusets: dict[int, int],
) -> tuple[HwPu, ...]:
    source = records.source
    machine_cpuset = bitmap_attr(machine, "cpuset", source)
    allowed_cpuset = bitmap_attr(machine, "allowed_cpuset", source)
    pus: list[HwPu] = []
    seen: set[int] = set()
    next_core = records.core_count
    for os_index, core, package, nodeset, _cpuset in records.pus:
        if os_index in seen:
            raise xml_failure(source, f"two PU objects have os_index {os_index}")
        seen.add(os_index)
        if core is None:  # no Core object above it: the PU is its own core
            core = next_core
            next_core += 1
        allowed = True
        if allowed_cpuset is not None and not allowed_cpuset >> os_index & 1:
            allowed = False
        if machine_cpuset is not None and not machine_cpuset >> os_index & 1:
            allowed = False
        node = _node_of_pu(os_index, nodeset, nodes, node_cpusets)
        pus.append(HwPu(os_index, core, package, node, allowed))
    return tuple(sorted(pus, key=lambda p: p.os_index))


def _pci_functions(
    records: ObjectRecords, nodes: list[HwNode], node_cpusets: dict[int, int], v3: bool
) -> tuple[HwPciFunction, ...]:
    pci: list[HwPciFunction] = []
    for element, parent, loc_nodeset, loc_cpuset in records.pci:
        if loc_nodeset is not None:
            locality = tuple(n.os_index for n in nodes if loc_nodeset >> n.os_index & 1)
        elif loc_cpuset is not None:
            locality = tuple(
                n.os_index for n in nodes if node_cpusets.get(n.os_index, 0) & loc_cpuset
            )
        else:
            locality = ()
        function = _pci_function(element, parent, locality, v3)
        if function is not None:
            pci.append(function)
    return tuple(pci)


def _page_sizes(nodes: list[HwNode], info: dict[str, str]) -> tuple[int, ...]:
    page_sizes = sorted({size for n in nodes for size, _ in n.page_types})
    if not page_sizes and "PageSizes" in info:
        try:
            page_sizes = sorted(int(x) for x in info["PageSizes"].split(",") if x.strip())
        except ValueError:
            page_sizes = []
    return tuple(page_sizes)


def _pci_function(
    element: etree._Element,
    parent: str,
    locality_nodes: tuple[int, ...],
    v3: bool,
) -> HwPciFunction | None:
    busid = (element.get("pci_busid") or "").lower()
    pci_type = element.get("pci_type") or ""
    # "0200 [8086:1521] [1137:008b] 01": class, [vendor:device], [subvendor:subdevice], revision
    parts = pci_type.replace("[", " ").replace("]", " ").split()
    if not _BUSID.match(busid) or len(parts) < 2 or ":" not in parts[1]:
        return None
    try:
        class_id = int(parts[0], 16)
        vendor, device = (p.lower() for p in parts[1].split(":", 1))
    except ValueError:
        return None
    if not (_HEX4.match(vendor) and _HEX4.match(device)):
        return None
    infos = infos_of(element)
    netdevs: list[str] = []
    osdevs: list[str] = []
    for child in element.iter("object"):
        if child.get("type") != "OSDev":
            continue
        name = child.get("name")
        if not name:
            continue
        osdevs.append(name)
        try:
            osdev_type = int(child.get("osdev_type", "-1"))
        except ValueError:
            osdev_type = -1
        is_net = (
            (osdev_type & V3_OSDEV_NETWORK)
            if v3 and osdev_type >= 0
            else osdev_type == V2_OSDEV_NETWORK
        )
        if is_net:
            netdevs.append(name)
    speed_text = element.get("pci_link_speed")
    try:
        speed = float(speed_text) if speed_text else None
    except ValueError:
        speed = None
    return HwPciFunction(
        busid=busid,
        class_id=class_id,
        vendor_id=vendor,
        device_id=device,
        vendor_name=infos.get("PCIVendor"),
        device_name=infos.get("PCIDevice"),
        netdevs=tuple(netdevs),
        osdevs=tuple(osdevs),
        locality=locality_nodes,
        link_gbytes_s=speed if speed else None,
        parent=parent,
    )


def _distances(
    root: etree._Element, nodes: list[HwNode], gp_of_node: dict[int, int], source: str
) -> tuple[tuple[int, ...], ...] | None:
    position = {node.os_index: i for i, node in enumerate(nodes)}
    gp_position = {gp: position[os] for os, gp in gp_of_node.items() if os in position}
    candidates = [d for d in root.iter("distances2") if d.get("type") == "NUMANode"]
    # prefer the OS-provided latency matrix (hwloc names it NUMALatency), then any unnamed one
    candidates.sort(key=lambda d: 0 if d.get("name") == "NUMALatency" else 1)
    for element in candidates:
        try:
            count = int(element.get("nbobjs", "0"))
            kind = int(element.get("kind", "0"))
        except ValueError:
            continue
        if count <= 0 or count > 4096 or not kind & 4:  # 4 = HWLOC_DISTANCES_KIND_MEANS_LATENCY
            continue
        indexes: list[int] = []
        values: list[int] = []
        try:
            for child in element:
                if child.tag == "indexes":
                    indexes.extend(int(x) for x in (child.text or "").split())
                elif child.tag == "u64values":
                    values.extend(int(x) for x in (child.text or "").split())
        except ValueError:
            raise xml_failure(source, "a <distances2> element holds non-integer values") from None
        if len(indexes) != count or len(values) != count * count:
            raise xml_failure(
                source,
                f"a <distances2> element gives {len(indexes)} indexes and {len(values)} values "
                f"for nbobjs={count}",
            )
        lookup = gp_position if element.get("indexing") == "gp" else position
        if any(i not in lookup for i in indexes):
            continue
        if len(set(indexes)) != len(nodes) or count != len(nodes):
            continue
        matrix = [[0] * count for _ in range(count)]
        for row, i in enumerate(indexes):
            for col, j in enumerate(indexes):
                matrix[lookup[i]][lookup[j]] = values[row * count + col]
        return tuple(tuple(r) for r in matrix)
    return None


def _node_of_pu(
    os_index: int,
    nodeset: int | None,
    nodes: list[HwNode],
    node_cpusets: dict[int, int],
) -> int | None:
    bit = 1 << os_index
    containing = [n for n in nodes if node_cpusets.get(n.os_index, 0) & bit]
    if nodeset is not None:
        in_nodeset = [n for n in nodes if nodeset >> n.os_index & 1]
        options = [n for n in in_nodeset if n in containing] or containing or in_nodeset
    else:
        options = containing
    if not options:
        return nodes[0].os_index if len(nodes) == 1 else None
    plain = [n for n in options if n.subtype is None]
    return (plain or options)[0].os_index


__all__ = [
    "MAX_XML_BYTES",
    "parse_hwloc_xml",
    "parse_hwloc_xml_file",
    "read_hwloc_xml_bytes",
]
