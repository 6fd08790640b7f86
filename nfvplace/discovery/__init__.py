"""Host discovery: a Compute Host Descriptor from the live host or from an hwloc XML export.

- `chd_from_hwloc_xml(path, host_id=...)`: parses the export directly (safe, never crashes, no hwloc
  needed), see `hwloc_xml`;
- `discover_live(sysfs_root=..., host_id=...)`: hwloc through pyhwloc (in a child process, so a crash
  in hwloc cannot take us down) plus sysfs/procfs and hypervisor probes, see `live`.

Both raise `DiscoveryError` (code `nfvplace.discovery.failed`) with a reason.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DiscoveryError
from ..models.chd import ComputeHostDescriptor
from .build import build_chd
from .host_id import default_host_id
from .hwloc_xml import parse_hwloc_xml, parse_hwloc_xml_file
from .live import discover_live


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
