"""Live discovery: hwloc (in a child process) + sysfs/procfs + hypervisor probes -> one CHD.

With the real root (`/`), the topology comes from hwloc through pyhwloc (a crash there falls back to
sysfs, with a note); with any other `sysfs_root` (a fixture tree, a mounted image) it comes from
sysfs, and no command is run.
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Collection
from pathlib import Path
from typing import Any

from .. import errors
from ..errors import DiscoveryError
from ..models.capabilities import ProcessorFeature
from ..models.chd import ComputeHostDescriptor, Kernel, Processor
from .build import _GHZ, build_chd, processor_from_topology
from .facts import HostFacts, NetDevice
from .features import NOT_IN_FLAGS, features_from_flags
from .host_id import default_host_id
from .hwloc_xml import parse_hwloc_xml
from .hwtopo import HwTopology
from .hypervisor import HostProbe, hypervisor_from_probe, probe_host
from .pyhwloc_live import export_live_xml
from .resctrl import read_cache_allocation
from .sysfs import (
    read_cmdline,
    read_cpuinfo,
    read_hugepages,
    read_isolation,
    read_kernel_realtime,
    read_kernel_version,
    read_net_devices,
    read_node_distances,
    read_offline_cpus,
)
from .sysfs_topology import sysfs_topology


def _processor(root: Path, topo: HwTopology, probe: HostProbe, unknown: list[str]) -> Processor:
    scratch: list[str] = []
    base = processor_from_topology(topo, scratch)
    info = read_cpuinfo(root)
    if info is None:
        unknown.extend(scratch)
        return base
    smt = max(Counter(p.core for p in topo.pus).values(), default=0) > 1
    features = list(features_from_flags(info.flags, info.vmx_flags, smt_active=smt))
    if probe.iommu:
        features.append(ProcessorFeature.iommu)
        if probe.iommu_large_pages:
            features.append(ProcessorFeature.iommu_large_pages)
        if probe.interrupt_remapping:
            features.append(ProcessorFeature.interrupt_remapping)
    unknown.extend(f"processor.features.{f.value}" for f in NOT_IN_FLAGS)
    model = info.model or base.model
    match = _GHZ.search(model or "")
    frequency = float(match.group(1)) * 1000 if match else info.mhz
    if info.vendor is None:
        unknown.append("processor.vendor")
    if frequency is None:
        unknown.append("processor.frequency_mhz")
    return base.model_copy(
        update={
            "vendor": info.vendor or base.vendor,
            "model": model,
            "architecture": info.architecture or base.architecture,
            "frequency_mhz": frequency,
            "flags": info.flags,
            "features": tuple(features),
        }
    )


def _hostname(root: Path, real: bool) -> str | None:
    for rel in ("proc/sys/kernel/hostname", "etc/hostname"):
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if text:
            return text
    return socket.gethostname() if real else None


def discover_live(
    sysfs_root: str | Path = "/",
    host_id: str | None = None,
    *,
    use_hwloc: bool | None = None,
    timeout: float = 60.0,
) -> ComputeHostDescriptor:
    """This host's CHD (or that of the tree under `sysfs_root`)."""
    root = Path(sysfs_root)
    if not root.is_dir():
        raise DiscoveryError(
            errors.DISCOVERY_FAILED, f"sysfs root {root} is not a directory", file=str(root)
        )
    real = root.resolve() == Path("/")
    notes: list[str] = []
    unknown: list[str] = []
    netdevs = read_net_devices(root)
    topo, tool = _topology(root, netdevs, real if use_hwloc is None else use_hwloc, timeout, notes)
    probe = probe_host(root, run_commands=real)
    processor = _processor(root, topo, probe, unknown)
    kernel = _kernel(root, unknown)
    hypervisor, hv_unknown, hv_notes = hypervisor_from_probe(
        probe, processor.features, kernel.cmdline or ""
    )
    unknown.extend(hv_unknown)
    notes.extend(hv_notes)
    isolation = read_isolation(root)
    hugepages = read_hugepages(root)
    if not any(hugepages.values()):
        unknown.append("numa_nodes[*].memory.hugepages")
    distances = read_node_distances(root)
    cache = _cache_allocation(root, processor.flags, notes, unknown)
    facts = HostFacts(
        processor=processor,
        kernel=kernel,
        hypervisor=hypervisor,
        hugepages={n: pools for n, pools in hugepages.items() if pools} or None,
        netdevs=netdevs,
        isolated=isolation.isolated,
        offline=read_offline_cpus(root),
        distances=distances or None,
        cache_allocation=cache,
        unknown=tuple(unknown),
        notes=tuple(notes),
    )
    return build_chd(
        topo,
        host_id or default_host_id(_hostname(root, real), "localhost"),
        facts,
        source="live",
        tool=tool,
    )


def _kernel(root: Path, unknown: list[str]) -> Kernel:
    """The kernel's version, command line and realtime flag; what could not be read is unknown."""
    cmdline = read_cmdline(root)
    version = read_kernel_version(root)
    if version is None:
        unknown.append("kernel.version")
    if cmdline is None:
        unknown.append("kernel.cmdline")
    return Kernel(version=version, cmdline=cmdline, realtime=read_kernel_realtime(root))


def _cache_allocation(
    root: Path, flags: Collection[str], notes: list[str], unknown: list[str]
) -> dict[str, Any] | None:
    """L3 cache allocation from resctrl; unknown (with how to mount it) if the CPU has it."""
    cache = read_cache_allocation(root)
    if cache is None and "cat_l3" in flags:
        notes.append(
            "L3 cache allocation: resctrl is not mounted (mount -t resctrl resctrl /sys/fs/resctrl)"
        )
        unknown.append("cache_allocation")
    return cache


def _topology(
    root: Path, netdevs: tuple[NetDevice, ...], use_hwloc: bool, timeout: float, notes: list[str]
) -> tuple[HwTopology, str]:
    """The topology from hwloc (in a child process), else from sysfs alone; and the tool said."""
    if use_hwloc:
        try:
            topo = parse_hwloc_xml(export_live_xml(timeout).encode("utf-8"), "<live hwloc export>")
            return topo, f"nfvplace discover (pyhwloc, hwloc XML {topo.version}, and sysfs)"
        except DiscoveryError as exc:
            notes.append(f"hwloc unavailable ({exc.message}); topology read from sysfs")
    sysfs = sysfs_topology(root, netdevs)
    if sysfs is None:
        raise DiscoveryError(
            errors.DISCOVERY_FAILED,
            f"no CPU topology under {root / 'sys/devices/system/cpu'}",
            file=str(root),
        )
    return sysfs, "nfvplace discover (sysfs)"
