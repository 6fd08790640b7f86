"""Table-driven cases per constraint family: feasible and infeasible, each with its reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from checker import violations

from nfvplace.claims import claim
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import place  # the engine door: these cases probe the engine, lint aside


@dataclass
class Case:
    name: str
    hosts: list[ComputeHostDescriptor]
    vm: VmDescriptor
    reason: str | None = None  # None: must fit
    requested: float | None = None
    available: float | None = None
    node: int | None = None  # expected node of cpu-set 0 when it fits
    summary: str | None = None  # substring of the summary line
    options: dict[str, Any] = field(default_factory=dict)


def two_nodes(**kw: Any) -> list[NodeSpec]:
    return [NodeSpec(**kw), NodeSpec(**kw)]


CPU = [
    Case("pairs fit", [host()], vm(cpu_sets=[cpu_set(0, 8)])),
    Case(
        "too many pairs",
        [host()],
        vm(cpu_sets=[cpu_set(0, 10)]),
        "core_pairs",
        5,
        4,
        summary="1 have no NUMA node with 5 free core pairs",
    ),
    Case(
        "pairs on a host without SMT",
        [host(smt=False)],
        vm(cpu_sets=[cpu_set(0, 2)]),
        "smt",
        summary="have no SMT",
    ),
    Case(
        "isolate singles take whole cores",
        [host()],
        vm(cpu_sets=[cpu_set(0, 5, pairs=False)]),
        "cores",
        5,
        4,
    ),
    Case(
        "prefer singles share cores",
        [host()],
        vm(cpu_sets=[cpu_set(0, 8, pairs=False, thread_policy="prefer")]),
    ),
    Case(
        "prefer singles beyond the threads",
        [host()],
        vm(cpu_sets=[cpu_set(0, 9, pairs=False, thread_policy="prefer")]),
        "threads",
        9,
        8,
    ),
    Case(
        "require pairs singles up",
        [host()],
        vm(cpu_sets=[cpu_set(0, 8, pairs=False)], cpu_thread_policy="require"),
    ),
    Case(
        "require on a host without SMT",
        [host(smt=False)],
        vm(cpu_sets=[cpu_set(0, 2, pairs=False)], cpu_thread_policy="require"),
        "smt",
    ),
    Case(
        "isolated vCPU next to a host-reserved sibling",
        # cores 0..3 on node 0; threads 8..11 are host-reserved: 4 isolated half cores remain
        [host(nodes=[NodeSpec(cores=4), NodeSpec(cores=0)], ineligible=(8, 9, 10, 11), smt=True)],
        vm(cpu_sets=[cpu_set(0, 4, pairs=False)]),
        node=0,
    ),
    Case(
        "isolated vCPU never next to another VM",
        [host(nodes=[NodeSpec(cores=2), NodeSpec(cores=0)], used={2: "x", 3: "x"})],
        vm(cpu_sets=[cpu_set(0, 1, pairs=False)]),
        "cores",
        1,
        0,
    ),
    Case(
        "emulator thread needs one more PU",
        [host(nodes=[NodeSpec(cores=2), NodeSpec(cores=0)])],
        vm(cpu_sets=[cpu_set(0, 4)], emulator_threads="isolate"),
        "threads",
        1,
        0,
    ),
    Case(
        "emulator thread fits",
        [host(nodes=[NodeSpec(cores=3), NodeSpec(cores=0)])],
        vm(cpu_sets=[cpu_set(0, 4)], emulator_threads="isolate"),
    ),
]

MEMORY = [
    Case("hugepages fit", [host()], vm(cpu_sets=[cpu_set(0, 2, hugepages_1g=8)])),
    Case(
        "hugepages short",
        [host()],
        vm(cpu_sets=[cpu_set(0, 2, hugepages_1g=9)]),
        "hugepages",
        9,
        8,
        summary="1 have no NUMA node with 9 free 1 GiB pages",
    ),
    Case(
        "hugepages used by others",
        [host(nodes=two_nodes(hugepages_1g=8, hugepages_1g_used=6))],
        vm(cpu_sets=[cpu_set(0, 2, hugepages_1g=3)]),
        "hugepages",
        3,
        2,
    ),
    Case(
        "normal memory short",
        [host(nodes=two_nodes(hugepages_1g=8, memory_mib=10240))],
        vm(cpu_sets=[cpu_set(0, 2, memory_mib=4096)]),
        "memory",
        4096,
        2048,
    ),
    Case(
        "memory bandwidth of a node",
        [host(nodes=two_nodes(bandwidth_gbps=50))],
        vm(cpu_sets=[cpu_set(0, 2, memory_bandwidth_gbps=60)]),
        "memory_bandwidth",
        60,
        50,
    ),
    Case(
        "pages and pairs on different nodes",
        [host(nodes=[NodeSpec(cores=4, hugepages_1g=0), NodeSpec(cores=1, hugepages_1g=8)])],
        vm(cpu_sets=[cpu_set(0, 8, hugepages_1g=4)]),
        "numa_combination",
        summary="have no NUMA node with 4 free core pairs and 4 free 1 GiB pages",
    ),
]

SRIOV = {"name": "eth0", "mode": "sriov", "speed_gbps": 25, "bandwidth_gbps": 10}
DEDICATED = {"name": "eth1", "mode": "dedicated", "speed_gbps": 25}
NICS = [
    Case(
        "VF on the cpu-set's node",
        [host(nodes=[NodeSpec(), NodeSpec(ports=[PortSpec(speed=25)])])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(SRIOV,))]),
        node=1,
    ),
    Case(
        "no port fast enough",
        [host(nodes=[NodeSpec(ports=[PortSpec(speed=10)]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(SRIOV,))]),
        "sriov_vf",
        summary="0/1 hosts fit: 1 lack a free VF on a ≥ 25 Gbps port",
    ),
    Case(
        "all VFs in use",
        [host(nodes=[NodeSpec(ports=[PortSpec(vfs=2, vfs_used=2)]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(SRIOV,))]),
        "sriov_vf",
    ),
    Case(
        "port bandwidth used up",
        [host(nodes=[NodeSpec(ports=[PortSpec(bandwidth_used=20)]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(SRIOV,))]),
        "sriov_bandwidth",
        1,
        5,
    ),
    Case(
        "dedicated port fits",
        [host(nodes=[NodeSpec(ports=[PortSpec(speed=100)]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(DEDICATED,))]),
        node=0,
    ),
    Case(
        "dedicated port already shared by VFs",
        [host(nodes=[NodeSpec(ports=[PortSpec(usage="sriov", vfs_used=1)]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(DEDICATED,))]),
        "dedicated_port",
    ),
    Case(
        "dedicated and VF cannot share one port",
        [host(nodes=[NodeSpec(ports=[PortSpec()]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(DEDICATED, SRIOV))]),
        "infeasible",
        summary="fail the exact check on ports and VFs",
    ),
    Case(
        "vswitch missing",
        [host()],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=({"name": "v0", "mode": "vswitch"},))]),
        "vswitch",
    ),
    Case(
        "vswitch not accelerated",
        [host(vswitch={"type": "ovs", "accelerated": False})],
        vm(
            cpu_sets=[cpu_set(0, 2, interfaces=({"name": "v0", "mode": "vswitch"},))],
            hypervisor={"vswitch": {"accelerated": True}},
        ),
        "vswitch_acceleration",
    ),
    Case(
        "vswitch accelerated with bandwidth",
        [host(vswitch={"type": "ovs_dpdk", "accelerated": True, "bandwidth_gbps": 40})],
        vm(
            cpu_sets=[
                cpu_set(0, 2, interfaces=({"name": "v0", "mode": "vswitch", "bandwidth_gbps": 10},))
            ],
            hypervisor={"vswitch": {"accelerated": True}},
        ),
    ),
    Case(
        "vswitch bandwidth short",
        [host(vswitch={"type": "ovs_dpdk", "accelerated": True, "bandwidth_gbps": 5})],
        vm(
            cpu_sets=[
                cpu_set(0, 2, interfaces=({"name": "v0", "mode": "vswitch", "bandwidth_gbps": 10},))
            ]
        ),
        "vswitch_bandwidth",
        10,
        5,
    ),
    Case(
        "unrestricted interface anywhere",
        [host(nodes=[NodeSpec(), NodeSpec(ports=[PortSpec()])])],
        vm(cpu_sets=[cpu_set(0, 2)], interfaces=[SRIOV]),
        node=0,
    ),
]

CAPS = [
    Case(
        "vendor",
        [host(vendor="AuthenticAMD", model="AMD EPYC 7763 64-Core Processor")],
        vm(processor={"vendor": "GenuineIntel"}),
        "processor_vendor",
    ),
    Case(
        "flags", [host()], vm(processor={"required_flags": ["avx512f", "amx"]}), "processor_flags"
    ),
    Case(
        "capability present but disabled",
        [host(caps=["cpu_pinning"], disabled_caps=("hugepage_numa_pinning",))],
        vm(hypervisor={"required_capabilities": ["hugepage_numa_pinning"]}),
        "capability_disabled",
        summary="have hugepage_numa_pinning present but not enabled",
    ),
    Case(
        "capability missing",
        [host(caps=["cpu_pinning"])],
        vm(hypervisor={"required_capabilities": ["cpu_pinning", "iommu"]}),
        "capability",
    ),
    Case(
        "capability set",
        [host(caps=["cpu_pinning", "slat"])],
        vm(hypervisor={"required_capability_sets": ["hw_virtualization"]}),
        "capability",
        summary="lack hypervisor capability slat_large_pages",
    ),
    Case(
        "hypervisor version",
        [host(hv_version="6.2.0")],
        vm(hypervisor={"type": "kvm", "min_version": "8.0"}),
        "hypervisor_version",
    ),
    Case("no hypervisor section", [host(hypervisor=False)], vm(), "hypervisor"),
    Case(
        "model of another family",
        [host(model="Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz", frequency=1800)],
        vm(processor={"model": "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"}),
        "processor_model",
    ),
    Case(
        "same family at the reference frequency",
        [host(model="Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", frequency=2600)],
        vm(
            processor={
                "model": "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
                "reference_frequency_mhz": 2500,
            }
        ),
    ),
    Case(
        "older generation of the same family, faster",  # Skylake for a VM sized on Ice Lake
        [host(model="Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", frequency=3000)],
        vm(
            processor={
                "model": "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz",
                "reference_frequency_mhz": 2600,
            }
        ),
        "processor_model",
    ),
    Case(
        "newer generation of another tier",  # Sapphire Rapids Platinum for an Ice Lake Gold
        [host(model="Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz", frequency=2600)],
        vm(
            processor={
                "model": "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz",
                "reference_frequency_mhz": 2600,
            }
        ),
    ),
    Case(
        "newer generation below the reference frequency",
        [host(model="Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz", frequency=2000)],
        vm(
            processor={
                "model": "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz",
                "reference_frequency_mhz": 2600,
            }
        ),
        "processor_model",
    ),
    Case(
        "frequency scaling accepts 75 % of the reference",
        [host(model="Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz", frequency=1900)],
        vm(
            processor={
                "vendor": "GenuineIntel",
                "model": "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
                "reference_frequency_mhz": 2500,
            }
        ),
        options={"frequency_scaling": True},
    ),
    Case(
        "frequency scaling below 75 %",
        [host(model="Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz", frequency=1800)],
        vm(
            processor={
                "model": "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
                "reference_frequency_mhz": 2500,
            }
        ),
        "processor_model",
        options={"frequency_scaling": True},
    ),
    Case(
        "minimum frequency",
        [host(frequency=2000)],
        vm(processor={"min_frequency_mhz": 2400}),
        "processor_frequency",
        2400,
        2000,
    ),
]

IMPACT = [
    Case(
        "max instances per host",
        [host(instances=({"id": "a-1", "vm": "vm"}, {"id": "a-2", "vm": "vm"}))],
        vm(impact={"max_instances_per_host": 2}),
        "max_instances",
        2,
        2,
    ),
    Case(
        "memory-bandwidth budget",
        [
            host(
                nodes=two_nodes(bandwidth_gbps=50),
                instances=({"id": "a-1", "vm": "x", "memory_bandwidth_gbps": 90},),
            )
        ],
        vm(impact={"memory_bandwidth_gbps": 20}),
        "memory_bandwidth_budget",
        20,
        10,
    ),
    Case(
        "memory-bandwidth budget fits",
        [host(nodes=two_nodes(bandwidth_gbps=50))],
        vm(impact={"memory_bandwidth_gbps": 20}),
    ),
]

TOPOLOGY = [
    Case(
        "two cpu-sets on distinct nodes",
        [host()],
        vm(cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)]),
    ),
    Case(
        "two cpu-sets, one node",
        [host(nodes=[NodeSpec(cores=8), NodeSpec(cores=0)])],
        vm(cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)]),
        "numa_nodes",
        2,
        1,
    ),
    Case(
        "two cpu-sets may share a node",
        [host(nodes=[NodeSpec(cores=8), NodeSpec(cores=0)])],
        vm(cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)], cpu_sets_may_share_node=True),
    ),
    Case(
        "shared node: together they do not fit",
        [host(nodes=[NodeSpec(cores=3), NodeSpec(cores=0)])],
        vm(cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)], cpu_sets_may_share_node=True),
        "infeasible",
        summary="1 fail the exact check on free cores of the nodes shared",
    ),
    Case(
        "interconnect bandwidth too small",
        [host(interconnect=({"nodes": [0, 1], "bandwidth_gbps": 1},))],
        vm(
            cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)],
            cpu_set_bandwidth=[{"cpu_sets": [0, 1], "bandwidth_mbps": 2000}],
        ),
        "infeasible",
        summary="fail the exact check on bandwidth of the NUMA interconnect",
    ),
    Case(
        "interconnect bandwidth enough",
        [host(interconnect=({"nodes": [0, 1], "bandwidth_gbps": 10},))],
        vm(
            cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)],
            cpu_set_bandwidth=[{"cpu_sets": [0, 1], "bandwidth_mbps": 2000}],
        ),
    ),
]

CASES = CPU + MEMORY + NICS + CAPS + IMPACT + TOPOLOGY


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_constraint_family(case: Case) -> None:
    result = place(case.hosts, case.vm, **case.options)
    if case.reason is None:
        assert result.ok, result.diagnosis and result.diagnosis.summary
        assert violations(case.hosts, case.vm, result.configurations) == []
        config = result.configuration
        host_ = next(h for h in case.hosts if h.id == config.host)
        claim(host_, config)  # the engine's answer is claimable
        if case.node is not None:
            assert config.cpu_sets[0].numa_node == case.node
        return
    assert not result.ok
    assert result.configurations == ()
    diagnosis = result.diagnosis
    assert diagnosis is not None
    assert diagnosis.summary.startswith(f"0/{len(case.hosts)} hosts fit: ")
    assert len(diagnosis.rejections) == len(case.hosts)
    rejection = diagnosis.rejections[0]
    assert rejection.reason == case.reason, rejection
    if case.requested is not None:
        assert rejection.requested == case.requested
    if case.available is not None:
        assert rejection.available == case.available
    if case.summary is not None:
        assert case.summary in diagnosis.summary
