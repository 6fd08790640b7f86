"""Cases that defeat a first-fit placer (host by host, node by node, taking the first thread that fits)."""

from __future__ import annotations

from builders import NodeSpec, PortSpec, cpu_set, host, vm
from checker import violations

from nfvplace.placement import place  # the engine door: these cases probe the engine, lint aside

SRIOV = {"name": "eth0", "mode": "sriov", "speed_gbps": 25, "bandwidth_gbps": 10}


def test_nic_only_on_node_1() -> None:
    h = host(nodes=[NodeSpec(cores=8), NodeSpec(cores=8, ports=[PortSpec(speed=25)])])
    v = vm(cpu_sets=[cpu_set(0, 8, hugepages_1g=2, interfaces=(SRIOV,))])
    result = place([h], v)
    assert result.ok
    config = result.configuration
    assert config.cpu_sets[0].numa_node == 1
    assert config.interfaces[0].numa_node == 1
    assert violations([h], v, result.configurations) == []


def test_hugepages_free_only_on_one_node() -> None:
    h = host(nodes=[NodeSpec(hugepages_1g=8, hugepages_1g_used=8), NodeSpec(hugepages_1g=8)])
    v = vm(cpu_sets=[cpu_set(0, 4, hugepages_1g=6)])
    result = place([h], v)
    assert result.ok
    assert result.configuration.cpu_sets[0].numa_node == 1


def test_fragmented_pairs() -> None:
    # 16 cores, threads c and c + 16. Node 0 (cores 0..7): every sibling 16..23 used by another VM,
    # so 8 free threads and no whole core. Node 1 (cores 8..15): cores 8..11 wholly used, 12..15
    # free, so also 8 free threads. Counting threads, first fit takes node 0 and breaks the pairs.
    used = {16 + c: "other" for c in range(8)}
    used.update(dict.fromkeys(range(8, 12), "other"))
    used.update({c + 16: "other" for c in range(8, 12)})
    h = host(nodes=[NodeSpec(cores=8), NodeSpec(cores=8)], used=used)
    v = vm(cpu_sets=[cpu_set(0, 8)])
    result = place([h], v)
    assert result.ok
    placement = result.configuration.cpu_sets[0]
    assert placement.numa_node == 1
    assert set(placement.vcpu_pins.values()) == {12, 13, 14, 15, 28, 29, 30, 31}
    assert violations([h], v, result.configurations) == []


def test_isolated_vcpus_never_sit_next_to_host_reserved_threads() -> None:
    # node 0 has 2 free threads whose siblings are host-reserved (housekeeping: noisy), and 4
    # whole cores: the two unpaired isolated vCPUs take whole cores, their siblings kept idle;
    # with 5 vCPUs the node has no 5 whole cores and the VM does not fit there
    h = host(nodes=[NodeSpec(cores=6), NodeSpec(cores=0)], ineligible=(6, 7))
    v = vm(cpu_sets=[cpu_set(0, 2, pairs=False)])
    result = place([h], v)
    assert result.ok
    placement = result.configuration.cpu_sets[0]
    assert not {0, 1} & set(placement.vcpu_pins.values())
    assert len(placement.reserved_siblings) == 2
    assert not place([h], vm(cpu_sets=[cpu_set(0, 5, pairs=False)])).ok


def test_vf_pairing_on_the_right_node_across_hosts() -> None:
    # first host has free cores everywhere but its only NIC is full; second host fits
    h1 = host("a", nodes=[NodeSpec(ports=[PortSpec(vfs=1, vfs_used=1)]), NodeSpec()])
    h2 = host("b", nodes=[NodeSpec(), NodeSpec(ports=[PortSpec()])])
    v = vm(cpu_sets=[cpu_set(0, 4, interfaces=(SRIOV,))])
    result = place([h1, h2], v)
    assert result.ok
    assert result.configuration.host == "b"
