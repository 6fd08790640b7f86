"""The neutral topology that discovery builds a CHD from.

Both sources (an hwloc XML export, or the live host through pyhwloc, which we also read as the XML it
exports) are reduced to these plain values first; `build.py` then turns them into a CHD. Nothing here
does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_HEX = re.compile(r"[0-9a-f]*")


def parse_bitmap(text: str | None) -> int | None:
    """An hwloc bitmap (`0xffffffff,0x0000000f`, words most significant first) as an int.

    Empty words (`0xff,,,0x1`) are zero words. A leading `0xf...f` word means "every higher bit set" (infinite bitmap); it is read as one
    all-ones 32-bit word, which is enough once intersected with a finite set. Returns None for
    a missing attribute; raises ValueError on a malformed one.
    """
    if text is None:
        return None
    words = text.strip().split(",")
    if len(words) > 1 << 15:  # 1M bits, as many as any machine has PUs
        raise ValueError(f"bitmap of {len(words)} words is too large")
    digits: list[str] = []
    for word in words:
        word = word.strip().lower() or "0x0"  # hwloc writes zero words as empty
        if word == "0xf...f":
            word = "0xffffffff"
        if not word.startswith("0x") or len(word) > 10:
            raise ValueError(f"bad bitmap word {word!r} in {text!r}")
        digits.append(word[2:].rjust(8, "0"))
    joined = "".join(digits)
    if _HEX.fullmatch(joined) is None:  # int() alone would accept "_" and signs
        raise ValueError(f"bad bitmap {text!r}")
    return int(joined, 16)


@dataclass(frozen=True, slots=True)
class HwPu:
    """One hardware thread."""

    os_index: int
    core: int  # logical index of its Core (unique in the host); a PU without a Core is its own core
    package: int | None  # os_index of its Package
    node: int | None  # os_index of its NUMA node
    allowed: bool  # inside the root's allowed_cpuset (and online)


@dataclass(frozen=True, slots=True)
class HwNode:
    """One NUMA node."""

    os_index: int
    memory_bytes: int | None
    page_types: tuple[tuple[int, int], ...] = ()  # (page size in bytes, count)
    subtype: str | None = None  # e.g. MCDRAM, HBM, NVM (hwloc's subtype)
    allowed: bool = True  # inside the root's allowed_nodeset


@dataclass(frozen=True, slots=True)
class HwPciFunction:
    """One PCI function (hwloc PCIDev)."""

    busid: str  # domain:bus:device.function, lower case
    class_id: int  # e.g. 0x0200 ethernet
    vendor_id: str  # 4 hex digits, lower case
    device_id: str
    vendor_name: str | None = None
    device_name: str | None = None
    netdevs: tuple[str, ...] = ()  # network OS devices (eth0, ib0)
    osdevs: tuple[str, ...] = ()  # every OS device name
    locality: tuple[int, ...] = ()  # NUMA node os indexes of the closest non-I/O ancestor
    link_gbytes_s: float | None = None  # PCIe link speed in GB/s as hwloc reports it
    parent: str = ""  # key of the parent bridge (or "" for host bridges)

    @property
    def domain_bus(self) -> str:
        return self.busid.rsplit(":", 1)[0]

    @property
    def slot(self) -> str:
        """domain:bus:device, the physical device a multi-function NIC shares."""
        return self.busid.rsplit(".", 1)[0]

    @property
    def function(self) -> int:
        return int(self.busid.rsplit(".", 1)[1], 16)


@dataclass(frozen=True, slots=True)
class Cache:
    level: int
    kind: str  # "data", "instruction" or "unified"
    size_bytes: int


@dataclass(frozen=True, slots=True)
class HwL3:
    """One L3 cache instance: its ways (associativity), size, and the NUMA nodes under it."""

    os_index: int
    ways: int
    size_bytes: int
    nodes: tuple[int, ...]


@dataclass(frozen=True)
class HwTopology:
    """Everything discovery keeps from an hwloc topology."""

    version: str
    pus: tuple[HwPu, ...]
    nodes: tuple[HwNode, ...]  # sorted by os_index
    packages: tuple[int, ...]  # package os indexes, document order
    core_count: int
    pci: tuple[HwPciFunction, ...] = ()
    distances: tuple[tuple[int, ...], ...] | None = None  # rows/columns in `nodes` order
    info: Mapping[str, str] = field(
        default_factory=dict
    )  # Machine infos + first Package's CPU infos
    caches: tuple[Cache, ...] = ()  # one per (level, kind), first seen
    page_sizes: tuple[int, ...] = ()  # bytes, from page_type or the PageSizes info
    l3: tuple[HwL3, ...] = ()  # every L3 cache whose ways the export states
