"""Host discovery: a Compute Host Descriptor from the live host or from an hwloc XML export.

- `chd_from_hwloc_xml(path, host_id=...)`: parses the export directly (safe, never crashes, no hwloc
  needed), see `hwloc_xml`;
- `discover_live(sysfs_root=..., host_id=...)`: hwloc through pyhwloc (in a child process, so a crash
  in hwloc cannot take us down) plus sysfs/procfs and hypervisor probes, see `live`.

Both raise `DiscoveryError` (code `nfvplace.discovery.failed`) with a reason.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import DiscoveryError
from ..models.chd import ComputeHostDescriptor
from .build import build_chd
from .hwloc_xml import parse_hwloc_xml, parse_hwloc_xml_file
from .live import discover_live

_NOT_ID = re.compile(r"[^A-Za-z0-9._:@/-]+")


def default_host_id(candidate: str | None, fallback: str = "host") -> str:
    """A valid CHD id from a host name or a file stem."""
    text = _NOT_ID.sub("-", candidate or "").strip("-._:@/")[:253]
    return text or fallback


def chd_from_hwloc_xml(path: str | Path, host_id: str | None = None) -> ComputeHostDescriptor:
    """The CHD of an hwloc v2 (or v3) XML export. The id defaults to the file's name."""
    path = Path(path)
    topo = parse_hwloc_xml_file(path)
    return build_chd(
        topo,
        host_id or default_host_id(path.stem, "host"),
        source="hwloc-xml",
        tool=f"nfvplace discover --hwloc-xml (hwloc XML {topo.version}, {path.name})",
    )


__all__ = [
    "DiscoveryError",
    "build_chd",
    "chd_from_hwloc_xml",
    "default_host_id",
    "discover_live",
    "parse_hwloc_xml",
    "parse_hwloc_xml_file",
]
