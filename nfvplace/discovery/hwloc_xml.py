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
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from .. import errors
from ..errors import DiscoveryError, Issue
from .hwtopo import Cache, HwNode, HwPciFunction, HwPu, HwTopology, parse_bitmap

MAX_XML_BYTES = 64 * 1024 * 1024
MAX_OS_INDEX = 1 << 20  # PUs and NUMA nodes are indexed by bit position in hwloc bitmaps
_HEX4 = re.compile(r"^[0-9a-f]{4}$")
_BUSID = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
IO_TYPES = frozenset({"Bridge", "PCIDev", "OSDev"})
CACHE_TYPES = {
    "L1Cache": (1, "data"),
    "L2Cache": (2, "unified"),
    "L3Cache": (3, "unified"),
    "L4Cache": (4, "unified"),
    "L5Cache": (5, "unified"),
    "L1iCache": (1, "instruction"),
    "L2iCache": (2, "instruction"),
    "L3iCache": (3, "instruction"),
}
# OS device types: hwloc 2 numbers them, hwloc 3 uses bit flags.
V2_OSDEV_NETWORK = 2
V3_OSDEV_NETWORK = 1 << 4


def _fail(source: str, message: str, hint: str | None = None, path: str = "") -> DiscoveryError:
    return DiscoveryError(
        errors.DISCOVERY_FAILED,
        message,
        file=source,
        issues=(Issue(message, path=path, hint=hint),) if hint else (),
    )


def read_hwloc_xml_bytes(path: str | Path) -> bytes:
    """Read a file, bounded in size; unreadable files raise DiscoveryError."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_XML_BYTES:
            raise _fail(
                str(path),
                f"file is {size} bytes, more than the {MAX_XML_BYTES} allowed for an hwloc XML export",
            )
        with path.open("rb") as handle:
            return handle.read(MAX_XML_BYTES + 1)
    except OSError as exc:
        raise _fail(str(path), f"cannot read file: {exc.strerror or exc}") from exc


def _safe_root(data: bytes, source: str) -> etree._Element:
    if len(data) > MAX_XML_BYTES:
        raise _fail(source, f"document is larger than {MAX_XML_BYTES} bytes")
    if b"<!entity" in data.lower():
        raise _fail(
            source,
            "the XML declares entities, which hwloc exports never do; refused (unsafe input)",
            hint="export the topology again with `lstopo --of xml`",
        )
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise _fail(
            source,
            f"not well-formed XML: {exc.msg}",
            hint="give an hwloc XML export (`lstopo --of xml FILE`)",
            path=f"line {exc.lineno}" if exc.lineno else "",
        ) from exc
    except (ValueError, MemoryError) as exc:
        raise _fail(source, f"cannot parse XML: {exc}") from exc
    if root is None:
        raise _fail(source, "empty XML document")
    # Entities declared in an internal subset are refused even if the cheap scan above missed them.
    docinfo = root.getroottree().docinfo
    internal = docinfo.internalDTD
    if internal is not None and any(True for _ in internal.iterentities()):  # type: ignore[union-attr]
        raise _fail(source, "the XML declares entities; refused (unsafe input)")
    return root


@dataclass
class _Walk:
    source: str
    v3: bool
    pus: list[tuple[int, int | None, int | None, int | None, int | None]] = field(
        default_factory=list
    )  # (os_index, core, package, nodeset, cpuset)
    nodes: list[tuple[int, int | None, tuple[tuple[int, int], ...], str | None, int | None]] = (
        field(default_factory=list)
    )  # (os_index, memory, page types, subtype, cpuset)
    packages: list[int] = field(default_factory=list)
    core_count: int = 0
    pci: list[tuple[etree._Element, str, int | None, int | None]] = field(default_factory=list)
    caches: dict[tuple[int, str], int] = field(default_factory=dict)
    info: dict[str, str] = field(default_factory=dict)


def _int_attr(element: etree._Element, name: str, source: str) -> int | None:
    text = element.get(name)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise _fail(
            source,
            f"attribute {name}={text!r} of a {element.get('type')} object is not an integer",
            path=f"line {element.sourceline}",
        ) from None
    if value < 0:
        raise _fail(
            source, f"attribute {name}={text!r} is negative", path=f"line {element.sourceline}"
        )
    if name == "os_index" and value > MAX_OS_INDEX:
        raise _fail(
            source,
            f"os_index {value} of a {element.get('type')} object is beyond {MAX_OS_INDEX}",
            path=f"line {element.sourceline}",
        )
    return value


def _bitmap_attr(element: etree._Element, name: str, source: str) -> int | None:
    try:
        return parse_bitmap(element.get(name))
    except ValueError as exc:
        raise _fail(
            source,
            f"attribute {name} of a {element.get('type')} object is not an hwloc bitmap: {exc}",
            path=f"line {element.sourceline}",
        ) from None


def _infos(element: etree._Element) -> dict[str, str]:
    out: dict[str, str] = {}
    for child in element:
        if child.tag == "info":
            name, value = child.get("name"), child.get("value")
            if name is not None and value is not None:
                out.setdefault(name, value)
    return out


def _walk(
    element: etree._Element,
    walk: _Walk,
    package: int | None,
    core: int | None,
    locality: etree._Element | None,
    parent_bridge: str,
) -> None:
    kind = element.get("type")
    source = walk.source
    if kind is None:
        raise _fail(source, "an <object> has no type attribute", path=f"line {element.sourceline}")
    # Bitmaps are parsed only where used (PUs, NUMA nodes, and the locality of PCI devices).
    cpuset = nodeset = None
    if kind in ("PU", "NUMANode"):
        cpuset = _bitmap_attr(element, "cpuset", source)
        nodeset = _bitmap_attr(element, "nodeset", source)
    if kind not in IO_TYPES and kind != "NUMANode" and kind != "MemCache":
        locality = element
    os_index = _int_attr(element, "os_index", source)
    if kind == "Package":
        package = os_index if os_index is not None else len(walk.packages)
        walk.packages.append(package)
        infos = _infos(element)
        for key in ("CPUVendor", "CPUModel", "CPUFamilyNumber", "CPUModelNumber", "CPUStepping"):
            if key in infos:
                walk.info.setdefault(key, infos[key])
    elif kind == "Core":
        core = walk.core_count
        walk.core_count += 1
    elif kind == "PU":
        if os_index is None:
            raise _fail(source, "a PU has no os_index", path=f"line {element.sourceline}")
        walk.pus.append((os_index, core, package, nodeset, cpuset))
    elif kind == "NUMANode":
        if os_index is None:
            raise _fail(source, "a NUMANode has no os_index", path=f"line {element.sourceline}")
        pages: list[tuple[int, int]] = []
        for child in element:
            if child.tag == "page_type":
                size = _int_attr(child, "size", source)
                count = _int_attr(child, "count", source)
                if size:
                    pages.append((size, count or 0))
        walk.nodes.append(
            (
                os_index,
                _int_attr(element, "local_memory", source),
                tuple(pages),
                element.get("subtype"),
                cpuset,
            )
        )
    elif kind in CACHE_TYPES:
        size = _int_attr(element, "cache_size", source)
        level, cache_kind = CACHE_TYPES[kind]
        if size:
            walk.caches.setdefault((level, cache_kind), size)
    elif kind == "PCIDev":
        walk.pci.append(
            (
                element,
                parent_bridge,
                None if locality is None else _bitmap_attr(locality, "nodeset", source),
                None if locality is None else _bitmap_attr(locality, "cpuset", source),
            )
        )
    if kind == "Bridge":
        parent_bridge = element.get("gp_index") or element.get("bridge_pci") or parent_bridge
    for child in element:
        if child.tag == "object":
            _walk(child, walk, package, core, locality, parent_bridge)


def _pci_function(
    element: etree._Element,
    parent: str,
    locality_nodes: tuple[int, ...],
    v3: bool,
    source: str,
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
    infos = _infos(element)
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
            raise _fail(source, "a <distances2> element holds non-integer values") from None
        if len(indexes) != count or len(values) != count * count:
            raise _fail(
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


def parse_hwloc_xml(data: bytes, source: str = "<hwloc-xml>") -> HwTopology:
    """Parse hwloc XML bytes into the neutral topology; raises DiscoveryError, never crashes."""
    root = _safe_root(data, source)
    if root.tag != "topology":
        raise _fail(
            source,
            f"the root element is <{root.tag}>, not <topology>: this is not an hwloc XML export",
            hint="give a file written by `lstopo --of xml`",
        )
    version = root.get("version")
    if version is None or version.split(".")[0] not in {"2", "3"}:
        raise _fail(
            source,
            f"hwloc XML version {version or '1.x (no version attribute)'} is not supported; "
            "versions 2 and 3 are",
            hint="convert it with hwloc 2: `lstopo -i FILE --of xml new.xml`",
        )
    v3 = version.startswith("3")
    machines = [child for child in root if child.tag == "object"]
    if len(machines) != 1:
        raise _fail(
            source, f"<topology> must hold exactly one root <object>, found {len(machines)}"
        )
    machine = machines[0]
    walk = _Walk(source=source, v3=v3)
    walk.info.update(_infos(machine))
    for child in root:
        if child.tag == "info" and child.get("name") and child.get("value") is not None:
            walk.info.setdefault(str(child.get("name")), str(child.get("value")))
    try:
        _walk(machine, walk, None, None, None, "")
    except RecursionError:
        raise _fail(source, "the object tree is nested too deeply") from None
    if not walk.pus:
        raise _fail(
            source, "the topology has no PU objects", hint="export with the CPU objects kept"
        )

    nodes = sorted(
        (
            HwNode(os_index=os, memory_bytes=mem, page_types=pages, subtype=subtype)
            for os, mem, pages, subtype, _ in walk.nodes
        ),
        key=lambda n: n.os_index,
    )
    if len({n.os_index for n in nodes}) != len(nodes):
        raise _fail(source, "two NUMANode objects share an os_index")
    allowed_nodeset = _bitmap_attr(machine, "allowed_nodeset", source)
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
    node_cpusets = {os: cs or 0 for os, _, _, _, cs in walk.nodes}
    gp_of_node: dict[int, int] = {}
    for element in machine.iter("object"):
        if (
            element.get("type") == "NUMANode"
            and element.get("gp_index")
            and element.get("os_index")
        ):
            with contextlib.suppress(ValueError):
                gp_of_node[int(element.get("os_index", ""))] = int(element.get("gp_index", ""))

    machine_cpuset = _bitmap_attr(machine, "cpuset", source)
    allowed_cpuset = _bitmap_attr(machine, "allowed_cpuset", source)
    pus: list[HwPu] = []
    seen: set[int] = set()
    next_core = walk.core_count
    for os_index, core, package, nodeset, _cpuset in walk.pus:
        if os_index in seen:
            raise _fail(source, f"two PU objects have os_index {os_index}")
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
    pus.sort(key=lambda p: p.os_index)

    pci: list[HwPciFunction] = []
    for element, parent, loc_nodeset, loc_cpuset in walk.pci:
        if loc_nodeset is not None:
            locality = tuple(n.os_index for n in nodes if loc_nodeset >> n.os_index & 1)
        elif loc_cpuset is not None:
            locality = tuple(
                n.os_index for n in nodes if node_cpusets.get(n.os_index, 0) & loc_cpuset
            )
        else:
            locality = ()
        function = _pci_function(element, parent, locality, v3, source)
        if function is not None:
            pci.append(function)

    page_sizes = sorted({size for n in nodes for size, _ in n.page_types})
    if not page_sizes and "PageSizes" in walk.info:
        try:
            page_sizes = sorted(int(x) for x in walk.info["PageSizes"].split(",") if x.strip())
        except ValueError:
            page_sizes = []
    return HwTopology(
        version=version,
        pus=tuple(pus),
        nodes=tuple(nodes),
        packages=tuple(walk.packages),
        core_count=len({p.core for p in pus}),
        pci=tuple(pci),
        distances=_distances(root, nodes, gp_of_node, source),
        info=dict(walk.info),
        caches=tuple(
            Cache(level, kind, size) for (level, kind), size in sorted(walk.caches.items())
        ),
        page_sizes=tuple(page_sizes),
    )


def parse_hwloc_xml_file(path: str | Path) -> HwTopology:
    """Read and parse one hwloc XML export."""
    return parse_hwloc_xml(read_hwloc_xml_bytes(path), str(path))


__all__ = [
    "MAX_XML_BYTES",
    "parse_hwloc_xml",
    "parse_hwloc_xml_file",
    "read_hwloc_xml_bytes",
]
