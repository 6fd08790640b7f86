"""Readers of sysfs and procfs, each under a `root` prefix so tests run them on fixture trees.

Every reader returns plain values (or None when the file is absent) and never raises on a missing or
malformed file: what cannot be read is unknown, and the caller says so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .facts import NetDevice

_MAX_READ = 1 << 20
_PCI_ADDRESS = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_HUGEPAGE_DIR = re.compile(r"^hugepages-(\d+)kB$")
_NODE_DIR = re.compile(r"^node(\d+)$")


def read_text(path: Path) -> str | None:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            return handle.read(_MAX_READ)
    except OSError:
        return None


def read_int(path: Path) -> int | None:
    text = read_text(path)
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def _link_name(path: Path) -> str | None:
    """Last component of a symlink's target (sysfs links are relative; works under any root)."""
    try:
        return os.path.basename(os.readlink(path).rstrip("/"))
    except OSError:
        return None


def parse_cpulist(text: str) -> frozenset[int]:
    """A kernel CPU list (`0-3,8,10-15:2/4`) as a set; unknown words are ignored."""
    out: set[int] = set()
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        match = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+)/(\d+))?)?", part)
        if match is None:
            continue
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if last < first or last - first > 1 << 16:
            continue
        if match.group(3):
            used, group = int(match.group(3)), int(match.group(4))
            if group <= 0:
                continue
            out.update(c for c in range(first, last + 1) if (c - first) % group < used)
        else:
            out.update(range(first, last + 1))
    return frozenset(out)


# --- NUMA nodes -----------------------------------------------------------------------------------


def node_ids(root: Path) -> list[int]:
    base = root / "sys/devices/system/node"
    try:
        names = os.listdir(base)
    except OSError:
        return []
    return sorted(int(m.group(1)) for n in names if (m := _NODE_DIR.match(n)))


def read_hugepages(root: Path) -> dict[int, dict[int, tuple[int, int]]]:
    """Node -> hugepage size (KiB) -> (total, free), from `node*/hugepages/hugepages-*kB`."""
    out: dict[int, dict[int, tuple[int, int]]] = {}
    for node in node_ids(root):
        base = root / f"sys/devices/system/node/node{node}/hugepages"
        try:
            names = os.listdir(base)
        except OSError:
            continue
        pools: dict[int, tuple[int, int]] = {}
        for name in names:
            match = _HUGEPAGE_DIR.match(name)
            if match is None:
                continue
            total = read_int(base / name / "nr_hugepages")
            free = read_int(base / name / "free_hugepages")
            if total is None:
                continue
            pools[int(match.group(1))] = (total, free if free is not None else total)
        out[node] = pools
    return out


def read_node_memory_kib(root: Path) -> dict[int, int]:
    """Node -> MemTotal in KiB, from `node*/meminfo`."""
    out: dict[int, int] = {}
    for node in node_ids(root):
        text = read_text(root / f"sys/devices/system/node/node{node}/meminfo") or ""
        match = re.search(r"MemTotal:\s+(\d+)\s*kB", text)
        if match:
            out[node] = int(match.group(1))
    return out


def read_node_distances(root: Path) -> dict[int, tuple[int, ...]]:
    """Node -> its row of `node*/distance` (columns by ascending node id)."""
    out: dict[int, tuple[int, ...]] = {}
    for node in node_ids(root):
        text = read_text(root / f"sys/devices/system/node/node{node}/distance")
        if text is None:
            continue
        try:
            out[node] = tuple(int(x) for x in text.split())
        except ValueError:
            continue
    return out


# --- CPUs -----------------------------------------------------------------------------------------


def read_offline_cpus(root: Path) -> frozenset[int]:
    text = read_text(root / "sys/devices/system/cpu/offline")
    return parse_cpulist(text) if text else frozenset()


@dataclass(frozen=True, slots=True)
class Isolation:
    """PUs the host keeps for guests, by where it says so."""

    isolcpus: frozenset[int] = frozenset()
    nohz_full: frozenset[int] = frozenset()
    rcu_nocbs: frozenset[int] = frozenset()
    cpuset_isolated: frozenset[int] = frozenset()  # kernel `cpu/isolated` + cgroup v2 partitions

    @property
    def isolated(self) -> frozenset[int] | None:
        """The union; None when nothing isolates any PU (then every PU may be used)."""
        union = self.isolcpus | self.nohz_full | self.cpuset_isolated
        return union or None


def parse_cmdline_isolation(cmdline: str) -> Isolation:
    """isolcpus= (its flags such as `domain,managed_irq,` skipped), nohz_full=, rcu_nocbs=."""
    values: dict[str, frozenset[int]] = {}
    for word in cmdline.split():
        key, _, value = word.partition("=")
        if key not in {"isolcpus", "nohz_full", "rcu_nocbs"} or not value:
            continue
        parts = [p for p in value.split(",") if p and not p[0].isalpha()]
        values[key] = parse_cpulist(",".join(parts))
    return Isolation(
        isolcpus=values.get("isolcpus", frozenset()),
        nohz_full=values.get("nohz_full", frozenset()),
        rcu_nocbs=values.get("rcu_nocbs", frozenset()),
    )


def read_isolation(root: Path) -> Isolation:
    cmdline = read_cmdline(root) or ""
    isolation = parse_cmdline_isolation(cmdline)
    cpuset: set[int] = set()
    for rel in ("sys/devices/system/cpu/isolated", "sys/fs/cgroup/cpuset.cpus.isolated"):
        text = read_text(root / rel)
        if text:
            cpuset |= parse_cpulist(text)
    return Isolation(
        isolcpus=isolation.isolcpus,
        nohz_full=isolation.nohz_full,
        rcu_nocbs=isolation.rcu_nocbs,
        cpuset_isolated=frozenset(cpuset),
    )


@dataclass(frozen=True, slots=True)
class CpuInfo:
    vendor: str | None
    model: str | None
    flags: tuple[str, ...]
    vmx_flags: tuple[str, ...]
    mhz: float | None
    architecture: str | None


def parse_cpuinfo(text: str) -> CpuInfo:
    """The first processor's vendor, model, flags and MHz (x86), or ARM's implementer/part."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields.get("flags") or fields.get("Features"):
                break
            continue
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    vendor = fields.get("vendor_id")
    model = fields.get("model name")
    architecture: str | None = "x86_64" if vendor else None
    if vendor is None and "CPU implementer" in fields:
        vendor = f"ARM implementer {fields['CPU implementer']}"
        model = model or f"ARM part {fields.get('CPU part', 'unknown')}"
        architecture = "aarch64"
    flags = fields.get("flags") or fields.get("Features") or ""
    mhz: float | None
    try:
        mhz = float(fields["cpu MHz"]) if "cpu MHz" in fields else None
    except ValueError:
        mhz = None
    return CpuInfo(
        vendor=vendor,
        model=model,
        flags=tuple(flags.split()),
        vmx_flags=tuple(fields.get("vmx flags", "").split()),
        mhz=mhz,
        architecture=architecture,
    )


def read_cpuinfo(root: Path) -> CpuInfo | None:
    text = read_text(root / "proc/cpuinfo")
    return parse_cpuinfo(text) if text else None


# --- kernel ---------------------------------------------------------------------------------------


def read_cmdline(root: Path) -> str | None:
    text = read_text(root / "proc/cmdline")
    return text.strip() if text is not None else None


def read_kernel_version(root: Path) -> str | None:
    text = read_text(root / "proc/sys/kernel/osrelease")
    return text.strip() if text else None


def read_kernel_realtime(root: Path) -> bool | None:
    text = read_text(root / "sys/kernel/realtime")
    if text is None:
        version = read_text(root / "proc/version")
        return None if version is None else ("PREEMPT_RT" in version or "PREEMPT RT" in version)
    return text.strip() == "1"


# --- network devices and SR-IOV -------------------------------------------------------------------


def _virtfns(device: Path) -> tuple[str, ...]:
    try:
        names = os.listdir(device)
    except OSError:
        return ()
    found: list[tuple[int, str]] = []
    for name in names:
        match = re.fullmatch(r"virtfn(\d+)", name)
        if match:
            target = _link_name(device / name)
            if target and _PCI_ADDRESS.match(target):
                found.append((int(match.group(1)), target.lower()))
    return tuple(address for _, address in sorted(found))


def read_net_device(root: Path, name: str) -> NetDevice:
    base = root / "sys/class/net" / name
    device = base / "device"
    address = _link_name(device)
    if address is None or not _PCI_ADDRESS.match(address):
        address = None
    speed = read_int(base / "speed")
    physfn = _link_name(device / "physfn") if address else None
    numa = read_int(device / "numa_node") if address else None
    return NetDevice(
        name=name,
        pci_address=address.lower() if address else None,
        speed_mbps=speed if speed is not None and speed > 0 else None,
        sriov_totalvfs=read_int(device / "sriov_totalvfs") if address else None,
        sriov_numvfs=read_int(device / "sriov_numvfs") if address else None,
        vfs=_virtfns(device) if address else (),
        physfn=physfn.lower() if physfn and _PCI_ADDRESS.match(physfn) else None,
        numa_node=numa if numa is not None and numa >= 0 else None,
    )


def read_net_devices(root: Path) -> tuple[NetDevice, ...]:
    """Every interface under `/sys/class/net` (virtual ones have no PCI address)."""
    try:
        names = sorted(os.listdir(root / "sys/class/net"))
    except OSError:
        return ()
    return tuple(read_net_device(root, name) for name in names)
