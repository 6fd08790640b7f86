"""Hypervisor detection (clause 8.1.1.3): KVM, QEMU and libvirt versions, IOMMU, vSwitch.

Capabilities come from a documented table (component version -> capability) plus what the host shows
(`/dev/kvm`, KVM module parameters, `/sys/class/iommu`). What cannot be detected is returned as
unknown, never guessed. Command probes (`qemu-system-x86_64 --version`, `libvirtd --version` or
`virsh --version`, `ovs-vsctl`) only run against the real root, never for a fixture tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from ..models.capabilities import HypervisorCapability as Cap
from ..models.capabilities import HypervisorType, ProcessorFeature, VSwitchType
from ..models.chd import Hypervisor, VSwitch

Version = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class VersionRule:
    """`capability` needs libvirt >= `libvirt` and QEMU >= `qemu` (and KVM)."""

    capability: Cap
    libvirt: Version
    qemu: Version
    why: str


# Minimum versions at which libvirt/QEMU expose each placement-relevant capability to a KVM guest.
VERSION_TABLE: Final[tuple[VersionRule, ...]] = (
    VersionRule(Cap.cpu_pinning, (0, 9, 3), (0, 12), "<cputune><vcpupin> on KVM vCPU threads"),
    VersionRule(
        Cap.numa_memory_pinning,
        (1, 2, 7),
        (2, 1),
        "<numatune><memnode> per guest node; QEMU memory-backend host-nodes",
    ),
    VersionRule(
        Cap.hugepage_numa_pinning,
        (1, 2, 8),
        (2, 1),
        "<hugepages><page nodeset=...>; QEMU memory-backend-file with host-nodes",
    ),
)

# Intel VT-d registers (/sys/class/iommu/dmar*/intel-iommu/{cap,ecap}).
_VTD_CAP_SLLPS = 0xF << 34  # second-level large page support (2M, 1G, ...)
_VTD_ECAP_IR = 1 << 3  # interrupt remapping


def parse_version(text: str | None) -> Version | None:
    if not text:
        return None
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match is None:
        return None
    return tuple(int(g) for g in match.groups() if g is not None)


def format_version(version: Version | None) -> str | None:
    return ".".join(map(str, version)) if version else None


def parse_qemu_version(output: str) -> Version | None:
    """`QEMU emulator version 8.2.2 (Debian 1:8.2.2+ds-0ubuntu1)` -> (8, 2, 2)."""
    match = re.search(r"QEMU emulator version\s+(\d+\.\d+(?:\.\d+)?)", output)
    return parse_version(match.group(1)) if match else None


def parse_libvirt_version(output: str) -> Version | None:
    """`libvirtd (libvirt) 9.0.0` or virsh's bare `9.0.0`."""
    line = output.strip().splitlines()[0] if output.strip() else ""
    return parse_version(line)


def parse_ovs_version(output: str) -> Version | None:
    """`ovs-vsctl (Open vSwitch) 3.1.0`."""
    match = re.search(r"Open vSwitch\)\s+(\d+\.\d+(?:\.\d+)?)", output)
    return parse_version(match.group(1)) if match else None


def _run(command: Sequence[str], timeout: float = 5.0) -> str | None:
    """stdout of a command found on PATH, or None (missing, failing, or too slow)."""
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(
            list(command),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout or done.stderr


@dataclass(frozen=True)
class HostProbe:
    """What was found on the host; None means could not tell."""

    kvm: bool
    qemu: Version | None = None
    libvirt: Version | None = None
    libvirt_from: str | None = None  # "libvirtd" or "virsh" (client version)
    slat_enabled: bool | None = None  # KVM's ept / npt module parameter
    iommu: bool | None = None
    iommu_large_pages: bool | None = None
    interrupt_remapping: bool | None = None
    ovs: Version | None = None
    ovs_dpdk: bool | None = None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:4096].strip()
    except OSError:
        return None


def probe_host(root: Path, *, run_commands: bool) -> HostProbe:
    """Look at /dev/kvm, KVM module parameters, IOMMU sysfs, and (real root only) the tools."""
    slat: bool | None = None
    for param in ("sys/module/kvm_intel/parameters/ept", "sys/module/kvm_amd/parameters/npt"):
        value = _read(root / param)
        if value is not None:
            slat = value in {"Y", "1", "y"}
            break
    iommu, large, remap = _iommu(root)
    probe = HostProbe(
        kvm=(root / "dev/kvm").exists(),
        slat_enabled=slat,
        iommu=iommu,
        iommu_large_pages=large,
        interrupt_remapping=remap,
    )
    return _with_tools(probe) if run_commands else probe


def _iommu(root: Path) -> tuple[bool | None, bool | None, bool | None]:
    """(an IOMMU, its large pages, interrupt remapping), from the VT-d units in sysfs."""
    iommu: bool | None = None
    large: bool | None = None
    remap: bool | None = None
    iommu_dir = root / "sys/class/iommu"
    try:
        units = sorted(os.listdir(iommu_dir))
    except OSError:
        units = []
    if units:
        iommu = True
        caps = [_read(iommu_dir / u / "intel-iommu/cap") for u in units]
        ecaps = [_read(iommu_dir / u / "intel-iommu/ecap") for u in units]
        try:
            if all(c is not None for c in caps):
                large = all(int(c or "0", 16) & _VTD_CAP_SLLPS for c in caps)
            if all(e is not None for e in ecaps):
                remap = all(int(e or "0", 16) & _VTD_ECAP_IR for e in ecaps)
        except ValueError:
            large = remap = None
    elif (root / "sys/class").is_dir():
        iommu = False  # the kernel exposes IOMMU units there when one is enabled
    return iommu, large, remap


def _with_tools(probe: HostProbe) -> HostProbe:
    """The probe with the versions the host's QEMU, libvirt and Open vSwitch tools print."""
    qemu = libvirt = ovs = None
    libvirt_from = None
    dpdk: bool | None = None
    for binary in ("qemu-system-x86_64", "qemu-kvm", "/usr/libexec/qemu-kvm"):
        out = _run([binary, "--version"])
        if out and (qemu := parse_qemu_version(out)):
            break
    out = _run(["libvirtd", "--version"])
    if out and (libvirt := parse_libvirt_version(out)):
        libvirt_from = "libvirtd"
    else:
        out = _run(["virsh", "--version"])
        if out and (libvirt := parse_libvirt_version(out)):
            libvirt_from = "virsh"
    out = _run(["ovs-vsctl", "--version"])
    if out:
        ovs = parse_ovs_version(out)
        flag = _run(["ovs-vsctl", "--timeout=3", "get", "Open_vSwitch", ".", "dpdk_initialized"])
        dpdk = None if flag is None else flag.strip() == "true"
    return replace(
        probe, qemu=qemu, libvirt=libvirt, libvirt_from=libvirt_from, ovs=ovs, ovs_dpdk=dpdk
    )


@dataclass(frozen=True)
class DerivedCapabilities:
    capabilities: tuple[Cap, ...]
    disabled: tuple[Cap, ...]
    unknown: tuple[str, ...]


def derive_capabilities(
    probe: HostProbe, features: Sequence[ProcessorFeature], cmdline: str = ""
) -> DerivedCapabilities:
    """Clause 8.1.1.3 capabilities from the version table and what the host shows. Pure."""
    caps: list[Cap] = []
    disabled: list[Cap] = []
    unknown: list[str] = []
    for rule in VERSION_TABLE:
        if probe.libvirt is None or probe.qemu is None:
            unknown.append(f"hypervisor.capabilities.{rule.capability.value}")
        elif probe.libvirt >= rule.libvirt and probe.qemu >= rule.qemu:
            caps.append(rule.capability)
    if ProcessorFeature.slat in features:
        if probe.slat_enabled is False:
            disabled.append(Cap.slat)
        else:
            caps.append(Cap.slat)
            if ProcessorFeature.slat_large_pages in features:
                caps.append(Cap.slat_large_pages)
    elif not features:
        unknown.extend(["hypervisor.capabilities.slat", "hypervisor.capabilities.slat_large_pages"])
    words = set(cmdline.split())
    if probe.iommu is True:
        caps.append(Cap.iommu)
        if probe.iommu_large_pages is True:
            caps.append(Cap.iommu_large_pages)
        elif probe.iommu_large_pages is None:
            unknown.append("hypervisor.capabilities.iommu_large_pages")
        if probe.interrupt_remapping is True:
            if "intremap=off" in words or "intel_iommu=off" in words:
                disabled.append(Cap.interrupt_remapping)
            else:
                caps.append(Cap.interrupt_remapping)
        elif probe.interrupt_remapping is None:
            unknown.append("hypervisor.capabilities.interrupt_remapping")
    elif probe.iommu is None:
        unknown.append("hypervisor.capabilities.iommu")
    unknown.append("hypervisor.capabilities.no_instruction_emulation")
    return DerivedCapabilities(tuple(caps), tuple(disabled), tuple(unknown))


def hypervisor_from_probe(
    probe: HostProbe, features: Sequence[ProcessorFeature], cmdline: str = ""
) -> tuple[Hypervisor | None, tuple[str, ...], tuple[str, ...]]:
    """(hypervisor or None, unknown fields, notes)."""
    notes: list[str] = []
    if not probe.kvm:
        return None, ("hypervisor",), ("no /dev/kvm: KVM is not available on this host",)
    derived = derive_capabilities(probe, features, cmdline)
    unknown = list(derived.unknown)
    if probe.qemu is None:
        unknown.append("hypervisor.qemu_version")
    if probe.libvirt is None:
        unknown.append("hypervisor.libvirt_version")
    elif probe.libvirt_from == "virsh":
        notes.append("libvirt version is virsh's (client) version; libvirtd was not found")
    vswitch: VSwitch | None = None
    if probe.ovs is not None:
        vswitch = VSwitch(
            type=VSwitchType.ovs_dpdk if probe.ovs_dpdk else VSwitchType.ovs,
            version=format_version(probe.ovs),
            accelerated=bool(probe.ovs_dpdk),
        )
        if probe.ovs_dpdk is None:
            unknown.append("hypervisor.vswitch.accelerated")
    else:
        unknown.append("hypervisor.vswitch")
    hypervisor = Hypervisor(
        type=HypervisorType.kvm,
        version=format_version(probe.qemu),
        qemu_version=format_version(probe.qemu),
        libvirt_version=format_version(probe.libvirt),
        capabilities=derived.capabilities,
        disabled_capabilities=derived.disabled,
        vswitch=vswitch,
    )
    return hypervisor, tuple(unknown), tuple(notes)
