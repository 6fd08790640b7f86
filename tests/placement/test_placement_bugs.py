"""The smallest case of each placement bug of issue 11, one row each (fits or not, and why)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from checker import violations

import nfvplace
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor

SMT4_MODEL = "POWER9 (raw), altivec supported"


def smt4_host(cores: int, used: tuple[int, ...] = ()) -> ComputeHostDescriptor:
    """One node of `cores` 4-thread cores; core c has threads c, c + n, c + 2n, c + 3n."""
    cpus: list[dict[str, Any]] = []
    for c in range(cores):
        siblings = [c + k * cores for k in range(4)]
        for t in siblings:
            cpu: dict[str, Any] = {"id": t, "core": c, "siblings": siblings}
            if t in used:
                cpu.update(state="dedicated", owner="other")
            cpus.append(cpu)
    cpus.sort(key=lambda c: c["id"])
    return ComputeHostDescriptor.model_validate(
        {
            "schema": "nfvplace/chd/v1",
            "id": "p9",
            "processor": {"vendor": "IBM", "model": SMT4_MODEL},
            "hypervisor": {"type": "kvm", "capabilities": ["cpu_pinning"]},
            "numa_nodes": [{"id": 0, "cpus": cpus, "memory": {"total_mib": 65536}}],
        }
    )


def with_node_memory(h: ComputeHostDescriptor, **memory: Any) -> ComputeHostDescriptor:
    node = h.numa_nodes[0]
    new = node.model_copy(update={"memory": node.memory.model_copy(update=memory)})
    return h.model_copy(update={"numa_nodes": (new, *h.numa_nodes[1:])})


@dataclass
class Case:
    name: str
    hosts: list[ComputeHostDescriptor]
    vm: VmDescriptor
    fits: bool
    reason: str | None = None  # the rejection code when it does not fit


CASES = [
    Case(
        "emulator isolate next to its own prefer vCPU",
        [host(nodes=[NodeSpec(cores=1), NodeSpec(cores=0)])],
        vm(
            cpu_sets=[cpu_set(0, 1, pairs=False, thread_policy="prefer")],
            emulator_threads="isolate",
        ),
        True,
    ),
    Case(
        "oversubscribed VM with an SR-IOV VF",
        [host(nodes=[NodeSpec(ports=[PortSpec()])], shared={0: (4.0, 0.0), 1: (4.0, 0.0)})],
        vm(
            vcpus=2,
            memory_mib=1024,
            cpu_oversubscription=True,
            interfaces=[{"name": "e0", "mode": "sriov", "bandwidth_gbps": 1}],
        ),
        True,
    ),
    Case(
        "oversubscribed VM with a passthrough port",
        [host(nodes=[NodeSpec(ports=[PortSpec()])], shared={0: (4.0, 0.0), 1: (4.0, 0.0)})],
        vm(
            vcpus=2,
            memory_mib=1024,
            cpu_oversubscription=True,
            interfaces=[{"name": "e0", "mode": "dedicated"}],
        ),
        True,
    ),
    Case(
        "passthrough of 20 Gbps refuses a 10 Gbps port",
        [host(nodes=[NodeSpec(ports=[PortSpec(speed=10)])])],
        vm(
            cpu_sets=[
                cpu_set(
                    0, 2, interfaces=({"name": "e0", "mode": "dedicated", "bandwidth_gbps": 20},)
                )
            ]
        ),
        False,
        "dedicated_port",
    ),
    Case(
        "memory bandwidth: 0.1 Gbps fits exactly in 0.3 - 0.2",
        [with_node_memory(host(nodes=[NodeSpec(bandwidth_gbps=0.3)]), bandwidth_used_gbps=0.2)],
        vm(cpu_sets=[cpu_set(0, 2, memory_bandwidth_gbps=0.1)]),
        True,
    ),
    Case(
        "interconnect: 100 Mbps fits exactly in 0.3 - 0.2 Gbps",
        [
            host(
                nodes=[NodeSpec(cores=2), NodeSpec(cores=2)],
                interconnect=(
                    {"nodes": [0, 1], "bandwidth_gbps": 0.3, "bandwidth_used_gbps": 0.2},
                ),
            )
        ],
        vm(
            cpu_sets=[cpu_set(0, 2), cpu_set(1, 2, first_vcpu=2)],
            cpu_set_bandwidth=[{"cpu_sets": [0, 1], "bandwidth_mbps": 100}],
        ),
        True,
    ),
    Case(
        "crypto device of another class",
        [host(nodes=[NodeSpec(devices=["gpu"])])],
        vm(cpu_sets=[cpu_set(0, 2)], pci_devices=[{"class": "crypto"}]),
        False,
        "pci_device",
    ),
    Case(
        "crypto device of another model",
        [host(nodes=[NodeSpec(devices=["crypto"])])],
        vm(cpu_sets=[cpu_set(0, 2)], pci_devices=[{"class": "crypto", "model": "QAT 8970"}]),
        False,
        "pci_device",
    ),
    Case(
        "crypto device on the other node than its cpu-set",
        [host(nodes=[NodeSpec(cores=4), NodeSpec(cores=0, devices=["crypto"])])],
        vm(cpu_sets=[cpu_set(0, 2)], pci_devices=[{"class": "crypto", "cpu_set": 0}]),
        False,
        "numa_combination",  # cores on node 0, the device on node 1
    ),
    Case(
        "two requests cannot take one device",
        [host(nodes=[NodeSpec(devices=["crypto"])])],
        vm(
            cpu_sets=[cpu_set(0, 2)],
            pci_devices=[{"class": "crypto"}, {"class": "crypto", "cpu_set": 0}],
        ),
        False,
        None,
    ),
    Case(
        "physical network mismatch",
        [host(nodes=[NodeSpec(ports=[PortSpec(network="a")])])],
        vm(
            cpu_sets=[
                cpu_set(
                    0, 2, interfaces=({"name": "e0", "mode": "sriov", "physical_network": "b"},)
                )
            ]
        ),
        False,
        "physical_network",
    ),
    Case(
        "SMT4: 6 prefer vCPUs on two free 4-thread cores",
        [smt4_host(2)],
        vm(vcpus=6, memory_mib=1024),
        True,
    ),
    Case(
        "SMT4: 2 pairs need 2 whole cores, one is busy",
        [smt4_host(2, used=(0,))],
        vm(cpu_sets=[cpu_set(0, 4)]),
        False,
        "core_pairs",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_smallest_case(case: Case) -> None:
    result = nfvplace.place(case.hosts, case.vm)
    assert result.ok == case.fits, result.diagnosis and result.diagnosis.summary
    if result.ok:
        assert violations(case.hosts, case.vm, result.configurations) == []
    else:
        assert result.diagnosis is not None
        reasons = {r.reason for r in result.diagnosis.rejections}
        assert "internal" not in reasons
        if case.reason is not None:
            assert reasons == {case.reason}, result.diagnosis.summary


def test_emulator_shares_the_core_of_its_prefer_vcpu() -> None:
    h = host(nodes=[NodeSpec(cores=1), NodeSpec(cores=0)])
    v = vm(
        cpu_sets=[cpu_set(0, 1, pairs=False, thread_policy="prefer")], emulator_threads="isolate"
    )
    config = nfvplace.place([h], v).configuration
    assert {config.cpu_sets[0].vcpu_pins[0], *config.emulator_pins} == {0, 1}


def test_passthrough_without_port_speed_takes_a_port_as_fast_as_its_bandwidth() -> None:
    h = host(nodes=[NodeSpec(ports=[PortSpec(speed=10), PortSpec(speed=25)])])
    iface = {"name": "e0", "mode": "dedicated", "bandwidth_gbps": 20}
    config = nfvplace.place([h], vm(cpu_sets=[cpu_set(0, 2, interfaces=(iface,))])).configuration
    ports = {p.pci_address: p.speed_gbps for n in h.numa_nodes for p in n.ports}
    assert ports[config.interfaces[0].pci_address or ""] == 25


def test_shared_ratio_6_takes_six_one_vcpu_vms_per_pu() -> None:
    h = host(nodes=[NodeSpec(cores=1)], smt=False, shared={0: (6.0, 0.0)})
    placed = 0
    for k in range(8):
        result = nfvplace.place([h], vm(f"v{k}", vcpus=1, memory_mib=16, cpu_oversubscription=True))
        if not result.ok:
            break
        h = result.hosts[h.id]
        placed += 1
    assert placed == 6


def test_smt4_prefer_vm_of_four_vcpus_holds_one_core() -> None:
    h = smt4_host(2)
    config = nfvplace.place([h], vm(vcpus=4, memory_mib=1024)).configuration
    placement = config.cpu_sets[0]
    assert sorted(placement.vcpu_pins.values()) == [0, 2, 4, 6]  # the four threads of core 0
    assert placement.reserved_siblings == ()


def test_internal_failures_have_their_own_code() -> None:
    from nfvplace.placement.engine.attempt import SOLVE_SUMMARY

    assert "internal" in SOLVE_SUMMARY
    assert "PCI" not in SOLVE_SUMMARY["internal"]
