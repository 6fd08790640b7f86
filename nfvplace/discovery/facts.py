"""What the live host tells beyond hwloc (sysfs, procfs, hypervisor probes), as plain values.

`build.build_chd` merges these into the topology; every field is optional so that an XML export
(which has none of them) and a live host go through the same code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..models.chd import Hypervisor, Kernel, Processor


@dataclass(frozen=True, slots=True)
class NetDevice:
    """One network interface as sysfs shows it (`/sys/class/net/<name>`)."""

    name: str
    pci_address: str | None = None  # None for virtual interfaces (lo, bridges, ...)
    speed_mbps: int | None = None  # None when unknown (link down, or a driver that reports -1)
    sriov_totalvfs: int | None = None
    sriov_numvfs: int | None = None
    vfs: tuple[str, ...] = ()  # PCI addresses of the configured VFs (virtfn* links), by index
    physfn: str | None = None  # set when this interface is itself a VF
    numa_node: int | None = None


@dataclass(frozen=True)
class HostFacts:
    processor: Processor | None = None
    kernel: Kernel | None = None
    hypervisor: Hypervisor | None = None
    # NUMA node -> hugepage size in KiB -> (total, free)
    hugepages: Mapping[int, Mapping[int, tuple[int, int]]] | None = None
    netdevs: tuple[NetDevice, ...] = ()
    # PUs isolated for guests (isolcpus / nohz_full / cpuset partitions); None: no isolation set up
    isolated: frozenset[int] | None = None
    offline: frozenset[int] = frozenset()
    distances: Mapping[int, tuple[int, ...]] | None = None  # node -> distance row, sysfs order
    cache_allocation: Mapping[str, Any] | None = None  # from resctrl (`resctrl.py`), as CHD data
    unknown: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
