"""sysfs/procfs readers and live discovery on fixture trees built in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nfvplace import load
from nfvplace.discovery import discover_live
from nfvplace.discovery.sysfs import (
    parse_cmdline_isolation,
    parse_cpuinfo,
    parse_cpulist,
    read_cpuinfo,
    read_hugepages,
    read_isolation,
    read_net_devices,
    read_node_distances,
)
from nfvplace.errors import DiscoveryError
from nfvplace.models import ComputeHostDescriptor, dump
from nfvplace.models.capabilities import HypervisorCapability, ProcessorFeature

CMDLINE = (
    "BOOT_IMAGE=/vmlinuz-5.14.0 root=/dev/sda1 default_hugepagesz=1G hugepagesz=1G hugepages=12 "
    "isolcpus=managed_irq,domain,2-3,6-7 nohz_full=2-3,6-7 rcu_nocbs=2-3,6-7 intel_iommu=on iommu=pt"
)
CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 85
model name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz
cpu MHz\t\t: 3100.000
flags\t\t: fpu vme pse pae ht vmx ept vpid pdpe1gb aes avx512f dca flexpriority
vmx flags\t: vnmi preemption_timer posted_intr invvpid ept_x_only ept_ad ept_1gb flexpriority apicv

processor\t: 1
vendor_id\t: GenuineIntel
flags\t\t: fpu
"""


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _link(root: Path, rel: str, target: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def build_tree(root: Path) -> Path:
    """Two nodes x 2 cores x 2 threads, hugepages on both nodes, a PF with two VFs, isolcpus."""
    node_cpus = {0: [0, 1, 2, 3], 1: [4, 5, 6, 7]}
    pools = {0: {2048: (512, 500), 1048576: (4, 2)}, 1: {2048: (256, 256), 1048576: (8, 8)}}
    for node, cpus in node_cpus.items():
        base = f"sys/devices/system/node/node{node}"
        _write(root, f"{base}/cpulist", f"{cpus[0]}-{cpus[-1]}\n")
        _write(root, f"{base}/meminfo", f"Node {node} MemTotal:       16777216 kB\n")
        _write(root, f"{base}/distance", "10 21\n" if node == 0 else "21 10\n")
        for size, (total, free) in pools[node].items():
            _write(root, f"{base}/hugepages/hugepages-{size}kB/nr_hugepages", f"{total}\n")
            _write(root, f"{base}/hugepages/hugepages-{size}kB/free_hugepages", f"{free}\n")
        for cpu in cpus:
            topo = f"sys/devices/system/cpu/cpu{cpu}/topology"
            _write(root, f"{topo}/physical_package_id", f"{node}\n")
            _write(root, f"{topo}/core_id", f"{cpu % 2}\n")  # 0,2 share core 0; 1,3 core 1
    _write(root, "sys/devices/system/cpu/online", "0-7\n")
    _write(root, "proc/cmdline", CMDLINE + "\n")
    _write(root, "proc/cpuinfo", CPUINFO)
    _write(root, "proc/sys/kernel/osrelease", "5.14.0-362.el9.x86_64\n")
    _write(root, "proc/sys/kernel/hostname", "compute-07\n")
    _write(root, "proc/version", "Linux version 5.14.0-362.el9.x86_64 SMP PREEMPT_DYNAMIC\n")
    # a PF with two VFs on node 1
    pf = "sys/devices/pci0000:17/0000:18:00.0"
    _write(root, f"{pf}/class", "0x020000\n")
    _write(root, f"{pf}/vendor", "0x8086\n")
    _write(root, f"{pf}/device", "0x158b\n")
    _write(root, f"{pf}/numa_node", "1\n")
    _write(root, f"{pf}/sriov_totalvfs", "64\n")
    _write(root, f"{pf}/sriov_numvfs", "2\n")
    for index in range(2):
        vf = f"sys/devices/pci0000:17/0000:18:02.{index}"
        _write(root, f"{vf}/class", "0x020000\n")
        _write(root, f"{vf}/vendor", "0x8086\n")
        _write(root, f"{vf}/device", "0x154c\n")
        _write(root, f"{vf}/numa_node", "1\n")
        _link(root, f"{vf}/physfn", "../0000:18:00.0")
        _link(root, f"{pf}/virtfn{index}", f"../0000:18:02.{index}")
    _link(root, "sys/bus/pci/devices/0000:18:00.0", "../../../devices/pci0000:17/0000:18:00.0")
    for index in range(2):
        _link(
            root,
            f"sys/bus/pci/devices/0000:18:02.{index}",
            f"../../../devices/pci0000:17/0000:18:02.{index}",
        )
    _link(root, "sys/class/net/ens1f0/device", "../../../devices/pci0000:17/0000:18:00.0")
    _write(root, "sys/class/net/ens1f0/speed", "25000\n")
    _link(root, "sys/class/net/ens1f0v0/device", "../../../devices/pci0000:17/0000:18:02.0")
    _write(root, "sys/class/net/ens1f0v0/speed", "-1\n")
    _write(root, "sys/class/net/lo/speed", "\n")
    # KVM with EPT on, and a VT-d unit with large pages and interrupt remapping
    _write(root, "dev/kvm", "")
    _write(root, "sys/module/kvm_intel/parameters/ept", "Y\n")
    _write(root, "sys/class/iommu/dmar0/intel-iommu/cap", "d2008c40660462\n")
    _write(root, "sys/class/iommu/dmar0/intel-iommu/ecap", "f050da\n")
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "root")


def test_hugepages_per_node_and_size(tree: Path) -> None:
    assert read_hugepages(tree) == {
        0: {2048: (512, 500), 1048576: (4, 2)},
        1: {2048: (256, 256), 1048576: (8, 8)},
    }


def test_pf_with_vfs_and_virtfn_links(tree: Path) -> None:
    devices = {d.name: d for d in read_net_devices(tree)}
    pf = devices["ens1f0"]
    assert pf.pci_address == "0000:18:00.0"
    assert pf.speed_mbps == 25000
    assert (pf.sriov_totalvfs, pf.sriov_numvfs) == (64, 2)
    assert pf.vfs == ("0000:18:02.0", "0000:18:02.1")
    assert pf.numa_node == 1
    assert pf.physfn is None
    vf = devices["ens1f0v0"]
    assert vf.physfn == "0000:18:00.0"
    assert vf.speed_mbps is None  # -1: unknown, not zero
    assert devices["lo"].pci_address is None


def test_isolation_from_cmdline(tree: Path) -> None:
    isolation = read_isolation(tree)
    assert isolation.isolcpus == {2, 3, 6, 7}
    assert isolation.nohz_full == {2, 3, 6, 7}
    assert isolation.rcu_nocbs == {2, 3, 6, 7}
    assert isolation.isolated == {2, 3, 6, 7}


def test_cpuset_isolated_partition_counts(tmp_path: Path) -> None:
    _write(tmp_path, "proc/cmdline", "quiet\n")
    _write(tmp_path, "sys/fs/cgroup/cpuset.cpus.isolated", "4-5\n")
    assert read_isolation(tmp_path).isolated == {4, 5}
    _write(tmp_path, "sys/fs/cgroup/cpuset.cpus.isolated", "\n")
    assert read_isolation(tmp_path).isolated is None


def test_cpuinfo_first_processor(tree: Path) -> None:
    info = read_cpuinfo(tree)
    assert info is not None
    assert info.vendor == "GenuineIntel"
    assert info.model == "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"
    assert info.mhz == 3100.0
    assert "vmx" in info.flags
    assert "ept_1gb" in info.vmx_flags


def test_cpuinfo_arm() -> None:
    info = parse_cpuinfo(
        "processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x48\nCPU part\t: 0xd01\n"
    )
    assert info.vendor == "ARM implementer 0x48"
    assert info.architecture == "aarch64"
    assert info.flags == ("fp", "asimd")


def test_node_distances(tree: Path) -> None:
    assert read_node_distances(tree) == {0: (10, 21), 1: (21, 10)}


@pytest.mark.parametrize(
    ("text", "cpus"),
    [
        ("0-3", {0, 1, 2, 3}),
        ("1,3,5", {1, 3, 5}),
        ("0-3,8-9\n", {0, 1, 2, 3, 8, 9}),
        ("0-7:2/4", {0, 1, 4, 5}),
        ("", set()),
        ("3-1", set()),
        ("garbage,2", {2}),
    ],
)
def test_parse_cpulist(text: str, cpus: set[int]) -> None:
    assert parse_cpulist(text) == cpus


@pytest.mark.parametrize(
    ("cmdline", "isolcpus", "nohz"),
    [
        ("isolcpus=1-3", {1, 2, 3}, set()),
        ("isolcpus=nohz,domain,managed_irq,4-7 nohz_full=4-7", {4, 5, 6, 7}, {4, 5, 6, 7}),
        ("quiet splash", set(), set()),
        ("isolcpus=", set(), set()),
    ],
)
def test_parse_cmdline_isolation(cmdline: str, isolcpus: set[int], nohz: set[int]) -> None:
    isolation = parse_cmdline_isolation(cmdline)
    assert isolation.isolcpus == isolcpus
    assert isolation.nohz_full == nohz


def test_discover_live_on_fixture_tree(tree: Path, tmp_path: Path) -> None:
    chd = discover_live(sysfs_root=tree)
    assert chd.id == "compute-07"
    assert [n.id for n in chd.numa_nodes] == [0, 1]
    node0, node1 = chd.numa_nodes
    assert {c.id: c.siblings for c in node0.cpus} == {0: (0, 2), 1: (1, 3), 2: (0, 2), 3: (1, 3)}
    assert sorted(c.id for c in chd.cpus if c.eligible) == [2, 3, 6, 7]
    pools = {p.size_kib: (p.total, p.used) for p in node0.memory.hugepages}
    assert pools == {2048: (512, 12), 1048576: (4, 2)}
    assert node0.memory.total_mib == 16384
    assert not node0.nics
    (nic,) = node1.nics
    assert (nic.vendor_id, nic.device_id) == ("8086", "158b")
    (port,) = nic.ports
    assert port.name == "ens1f0"
    assert port.speed_gbps == 25.0
    assert port.sriov_total_vfs == 64
    assert [vf.pci_address for vf in port.vfs] == ["0000:18:02.0", "0000:18:02.1"]
    assert chd.numa_distances == ((10, 21), (21, 10))
    assert chd.processor.vendor == "GenuineIntel"
    assert chd.processor.frequency_mhz == 2500.0
    assert {
        ProcessorFeature.hw_virtualization,
        ProcessorFeature.slat,
        ProcessorFeature.slat_large_pages,
        ProcessorFeature.smt,
        ProcessorFeature.iommu,
    } <= set(chd.processor.features)
    assert chd.kernel is not None
    assert chd.kernel.version == "5.14.0-362.el9.x86_64"
    assert chd.kernel.cmdline == CMDLINE
    assert chd.hypervisor is not None
    assert {
        HypervisorCapability.slat,
        HypervisorCapability.slat_large_pages,
        HypervisorCapability.iommu,
        HypervisorCapability.iommu_large_pages,
        HypervisorCapability.interrupt_remapping,
    } == set(chd.hypervisor.capabilities)
    assert chd.provenance is not None
    # no command runs against a fixture tree: versions and version-derived capabilities are unknown
    assert "hypervisor.qemu_version" in chd.provenance.unknown
    assert "hypervisor.capabilities.cpu_pinning" in chd.provenance.unknown
    out = tmp_path / "chd.yaml"
    out.write_text(dump(chd), encoding="utf-8")
    assert load(out) == chd


def test_no_isolation_means_every_pu_eligible(tree: Path) -> None:
    (tree / "proc/cmdline").write_text("quiet\n", encoding="utf-8")
    chd = discover_live(sysfs_root=tree, host_id="h1")
    assert chd.id == "h1"
    assert all(c.eligible for c in chd.cpus)


def test_offline_cpu_is_ineligible(tree: Path) -> None:
    _write(tree, "sys/devices/system/cpu/offline", "7\n")
    chd = discover_live(sysfs_root=tree)
    assert [c.id for c in chd.cpus if not c.eligible] == [0, 1, 4, 5, 7]


def test_ept_disabled_is_a_disabled_capability(tree: Path) -> None:
    (tree / "sys/module/kvm_intel/parameters/ept").write_text("N\n", encoding="utf-8")
    chd = discover_live(sysfs_root=tree)
    assert chd.hypervisor is not None
    assert HypervisorCapability.slat in chd.hypervisor.disabled_capabilities
    assert HypervisorCapability.slat not in chd.hypervisor.capabilities


def test_no_kvm_means_no_hypervisor_and_says_so(tree: Path) -> None:
    (tree / "dev/kvm").unlink()
    chd = discover_live(sysfs_root=tree)
    assert chd.hypervisor is None
    assert chd.provenance is not None
    assert "hypervisor" in chd.provenance.unknown


def test_empty_root_is_a_clean_error(tmp_path: Path) -> None:
    with pytest.raises(DiscoveryError, match="no CPU topology"):
        discover_live(sysfs_root=tmp_path)


def test_result_is_a_chd(tree: Path) -> None:
    assert isinstance(discover_live(sysfs_root=tree), ComputeHostDescriptor)
