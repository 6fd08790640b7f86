"""Walking the object tree of an hwloc XML export into raw records (`ObjectRecords`).

One pass over `<object>` elements: PUs with their core and package, NUMA nodes with their memory
and page pools, caches, and PCI functions with their locality (the closest non-I/O ancestor) and
parent bridge. `hwloc_xml` turns the records into the neutral topology.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from .hwtopo import parse_bitmap
from .xml_input import xml_failure

MAX_OS_INDEX = 1 << 20  # PUs and NUMA nodes are indexed by bit position in hwloc bitmaps
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
_CPU_INFOS = ("CPUVendor", "CPUModel", "CPUFamilyNumber", "CPUModelNumber", "CPUStepping")


@dataclass
class ObjectRecords:
    """What one walk of the object tree found, in document order."""

    source: str
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
    l3: list[tuple[int, int, int, int]] = field(
        default_factory=list
    )  # (index, ways, bytes, nodeset)
    info: dict[str, str] = field(default_factory=dict)


def int_attr(element: etree._Element, name: str, source: str) -> int | None:
    text = element.get(name)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise xml_failure(
            source,
            f"attribute {name}={text!r} of a {element.get('type')} object is not an integer",
            path=f"line {element.sourceline}",
        ) from None
    if value < 0:
        raise xml_failure(
            source, f"attribute {name}={text!r} is negative", path=f"line {element.sourceline}"
        )
    if name == "os_index" and value > MAX_OS_INDEX:
        raise xml_failure(
            source,
            f"os_index {value} of a {element.get('type')} object is beyond {MAX_OS_INDEX}",
            path=f"line {element.sourceline}",
        )
    return value


def bitmap_attr(element: etree._Element, name: str, source: str) -> int | None:
    try:
        return parse_bitmap(element.get(name))
    except ValueError as exc:
        raise xml_failure(
            source,
            f"attribute {name} of a {element.get('type')} object is not an hwloc bitmap: {exc}",
            path=f"line {element.sourceline}",
        ) from None


def infos_of(element: etree._Element) -> dict[str, str]:
    out: dict[str, str] = {}
    for child in element:
        if child.tag == "info":
            name, value = child.get("name"), child.get("value")
            if name is not None and value is not None:
                out.setdefault(name, value)
    return out


def walk_objects(
    element: etree._Element,
    records: ObjectRecords,
    package: int | None,
    core: int | None,
    locality: etree._Element | None,
    parent_bridge: str,
) -> None:
    """Record `element` and, depth first, every `<object>` under it."""
    kind = element.get("type")
    source = records.source
    if kind is None:
        raise xml_failure(
            source, "an <object> has no type attribute", path=f"line {element.sourceline}"
        )
    # Bitmaps are parsed only where used (PUs, NUMA nodes, and the locality of PCI devices).
    cpuset = nodeset = None
    if kind in ("PU", "NUMANode"):
        cpuset = bitmap_attr(element, "cpuset", source)
        nodeset = bitmap_attr(element, "nodeset", source)
    if kind not in IO_TYPES and kind != "NUMANode" and kind != "MemCache":
        locality = element
    os_index = int_attr(element, "os_index", source)
    if kind == "Package":
        package = _package(element, records, os_index)
    elif kind == "Core":
        core = records.core_count
        records.core_count += 1
    elif kind == "PU":
        if os_index is None:
            raise xml_failure(source, "a PU has no os_index", path=f"line {element.sourceline}")
        records.pus.append((os_index, core, package, nodeset, cpuset))
    elif kind == "NUMANode":
        _numa_node(element, records, os_index, cpuset)
    elif kind in CACHE_TYPES:
        size = int_attr(element, "cache_size", source)
        if size:
            records.caches.setdefault(CACHE_TYPES[kind], size)
        if kind == "L3Cache":
            _l3(element, records, os_index, size)
    elif kind == "PCIDev":
        records.pci.append(_pci_record(element, parent_bridge, locality, source))
    if kind == "Bridge":
        parent_bridge = element.get("gp_index") or element.get("bridge_pci") or parent_bridge
    for child in element:
        if child.tag == "object":
            walk_objects(child, records, package, core, locality, parent_bridge)


def _l3(
    element: etree._Element, records: ObjectRecords, os_index: int | None, size: int | None
) -> None:
    """An L3 cache whose ways and nodes the export states (for cache allocation)."""
    ways = int_attr(element, "cache_associativity", records.source)
    nodeset = bitmap_attr(element, "nodeset", records.source)
    if ways and size and nodeset:
        records.l3.append(
            (os_index if os_index is not None else len(records.l3), ways, size, nodeset)
        )


def _package(element: etree._Element, records: ObjectRecords, os_index: int | None) -> int:
    package = os_index if os_index is not None else len(records.packages)
    records.packages.append(package)
    infos = infos_of(element)
    for key in _CPU_INFOS:
        if key in infos:
            records.info.setdefault(key, infos[key])
    return package


def _numa_node(
    element: etree._Element, records: ObjectRecords, os_index: int | None, cpuset: int | None
) -> None:
    source = records.source
    if os_index is None:
        raise xml_failure(source, "a NUMANode has no os_index", path=f"line {element.sourceline}")
    pages: list[tuple[int, int]] = []
    for child in element:
        if child.tag == "page_type":
            size = int_attr(child, "size", source)
            count = int_attr(child, "count", source)
            if size:
                pages.append((size, count or 0))
    memory = int_attr(element, "local_memory", source)
    records.nodes.append((os_index, memory, tuple(pages), element.get("subtype"), cpuset))


def _pci_record(
    element: etree._Element, parent_bridge: str, locality: etree._Element | None, source: str
) -> tuple[etree._Element, str, int | None, int | None]:
    if locality is None:
        return element, parent_bridge, None, None
    nodeset = bitmap_attr(locality, "nodeset", source)
    return element, parent_bridge, nodeset, bitmap_attr(locality, "cpuset", source)
