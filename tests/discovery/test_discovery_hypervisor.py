"""Hypervisor version parsing and the version -> capability table."""

from __future__ import annotations

from pathlib import Path

import pytest

from nfvplace.discovery.hypervisor import (
    HostProbe,
    derive_capabilities,
    hypervisor_from_probe,
    parse_libvirt_version,
    parse_ovs_version,
    parse_qemu_version,
    probe_host,
)
from nfvplace.models.capabilities import HypervisorCapability as Cap
from nfvplace.models.capabilities import ProcessorFeature as Feat
from nfvplace.models.capabilities import VSwitchType


@pytest.mark.parametrize(
    ("output", "version"),
    [
        ("QEMU emulator version 8.2.2 (Debian 1:8.2.2+ds-0ubuntu1.4)\nCopyright", (8, 2, 2)),
        ("QEMU emulator version 2.0.0", (2, 0, 0)),
        ("QEMU emulator version 7.2", (7, 2)),
        ("something else", None),
    ],
)
def test_parse_qemu_version(output: str, version: tuple[int, ...] | None) -> None:
    assert parse_qemu_version(output) == version


@pytest.mark.parametrize(
    ("output", "version"),
    [("libvirtd (libvirt) 9.0.0\n", (9, 0, 0)), ("9.0.0\n", (9, 0, 0)), ("", None)],
)
def test_parse_libvirt_version(output: str, version: tuple[int, ...] | None) -> None:
    assert parse_libvirt_version(output) == version


def test_parse_ovs_version() -> None:
    assert parse_ovs_version("ovs-vsctl (Open vSwitch) 3.1.0\nDB Schema 8.3.1") == (3, 1, 0)
    assert parse_ovs_version("nope") is None


MODERN = HostProbe(
    kvm=True,
    qemu=(8, 2, 2),
    libvirt=(9, 0, 0),
    slat_enabled=True,
    iommu=True,
    iommu_large_pages=True,
    interrupt_remapping=True,
)


@pytest.mark.parametrize(
    ("probe", "features", "cmdline", "present", "disabled", "unknown"),
    [
        (
            MODERN,
            (Feat.slat, Feat.slat_large_pages),
            "",
            {
                Cap.cpu_pinning,
                Cap.numa_memory_pinning,
                Cap.hugepage_numa_pinning,
                Cap.slat,
                Cap.slat_large_pages,
                Cap.iommu,
                Cap.iommu_large_pages,
                Cap.interrupt_remapping,
            },
            set(),
            {"hypervisor.capabilities.no_instruction_emulation"},
        ),
        (  # libvirt 1.2.7: NUMA memory pinning, but per-node hugepages only from 1.2.8
            HostProbe(kvm=True, qemu=(2, 1), libvirt=(1, 2, 7)),
            (Feat.slat,),
            "",
            {Cap.cpu_pinning, Cap.numa_memory_pinning, Cap.slat},
            set(),
            {"hypervisor.capabilities.iommu", "hypervisor.capabilities.no_instruction_emulation"},
        ),
        (  # QEMU 2.0 lacks memory backends whatever libvirt says
            HostProbe(kvm=True, qemu=(2, 0, 0), libvirt=(9, 0, 0), iommu=False),
            (),
            "",
            {Cap.cpu_pinning},
            set(),
            {
                "hypervisor.capabilities.slat",
                "hypervisor.capabilities.slat_large_pages",
                "hypervisor.capabilities.no_instruction_emulation",
            },
        ),
        (  # versions unknown: never guessed
            HostProbe(kvm=True, slat_enabled=False, iommu=True, interrupt_remapping=True),
            (Feat.slat,),
            "intremap=off",
            {Cap.iommu},
            {Cap.slat, Cap.interrupt_remapping},
            {
                "hypervisor.capabilities.cpu_pinning",
                "hypervisor.capabilities.numa_memory_pinning",
                "hypervisor.capabilities.hugepage_numa_pinning",
                "hypervisor.capabilities.iommu_large_pages",
                "hypervisor.capabilities.no_instruction_emulation",
            },
        ),
    ],
)
def test_capability_table(
    probe: HostProbe,
    features: tuple[Feat, ...],
    cmdline: str,
    present: set[Cap],
    disabled: set[Cap],
    unknown: set[str],
) -> None:
    derived = derive_capabilities(probe, features, cmdline)
    assert set(derived.capabilities) == present
    assert set(derived.disabled) == disabled
    assert set(derived.unknown) == unknown


def test_ovs_dpdk_becomes_accelerated_vswitch() -> None:
    probe = HostProbe(kvm=True, qemu=(8, 0), libvirt=(9, 0), ovs=(3, 1, 0), ovs_dpdk=True)
    hypervisor, unknown, _ = hypervisor_from_probe(probe, ())
    assert hypervisor is not None
    assert hypervisor.vswitch is not None
    assert hypervisor.vswitch.type == VSwitchType.ovs_dpdk
    assert hypervisor.vswitch.accelerated
    assert hypervisor.vswitch.version == "3.1.0"
    assert "hypervisor.vswitch" not in unknown


def test_no_kvm_gives_no_hypervisor() -> None:
    hypervisor, unknown, notes = hypervisor_from_probe(HostProbe(kvm=False), ())
    assert hypervisor is None
    assert unknown == ("hypervisor",)
    assert "no /dev/kvm" in notes[0]


def test_probe_fixture_root_runs_no_command(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/kvm").write_text("")
    (tmp_path / "sys/class").mkdir(parents=True)
    probe = probe_host(tmp_path, run_commands=False)
    assert probe.kvm
    assert probe.qemu is None
    assert probe.libvirt is None
    assert probe.ovs is None
    assert probe.iommu is False  # /sys/class exists but shows no IOMMU unit


def test_probe_real_host_finds_kvm_as_the_device_says() -> None:
    probe = probe_host(Path("/"), run_commands=True)
    assert probe.kvm == Path("/dev/kvm").exists()
