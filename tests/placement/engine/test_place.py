"""The pipeline end to end: determinism, inputs untouched, sequential placement, policies, errors."""

from __future__ import annotations

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from checker import violations

import nfvplace
from nfvplace import errors
from nfvplace.claims import claim
from nfvplace.errors import NfvplaceError
from nfvplace.placement import FleetIndex, NoFitError


def fleet3() -> list[nfvplace.ComputeHostDescriptor]:
    return [
        host("a", used={0: "x", 16: "x", 1: "x", 17: "x"}),
        host("b"),
        host("c", used={0: "x", 16: "x"}),
    ]


def test_deterministic_for_same_input_and_seed() -> None:
    hosts = fleet3()
    v = vm(cpu_sets=[cpu_set(0, 4, hugepages_1g=1)])
    first = nfvplace.place(hosts, v, seed=7)
    for _ in range(3):
        again = nfvplace.place(hosts, v, seed=7)
        assert again.configurations == first.configurations
        assert again.hosts == first.hosts


def test_seed_breaks_ties_between_identical_hosts() -> None:
    hosts = [host(f"h{i}") for i in range(8)]
    v = vm(cpu_sets=[cpu_set(0, 2)])
    chosen = {nfvplace.place(hosts, v, seed=s).configuration.host for s in range(12)}
    assert len(chosen) > 1


def test_inputs_not_mutated() -> None:
    hosts = fleet3()
    v = vm(cpu_sets=[cpu_set(0, 4, hugepages_1g=1)])
    before = [h.model_dump() for h in hosts], v.model_dump()
    result = nfvplace.place(hosts, v)
    assert result.ok
    assert ([h.model_dump() for h in hosts], v.model_dump()) == before
    fleet = FleetIndex(hosts)
    nfvplace.place(fleet, v)
    assert [h.model_dump() for h in fleet.hosts] == before[0]


def test_result_hosts_are_the_claimed_hosts() -> None:
    hosts = fleet3()
    v = vm(cpu_sets=[cpu_set(0, 4, hugepages_1g=1)])
    result = nfvplace.place(hosts, v)
    config = result.configuration
    original = next(h for h in hosts if h.id == config.host)
    assert result.hosts == {config.host: claim(original, config)}


def test_pack_fills_the_fullest_host_spread_the_emptiest() -> None:
    hosts = fleet3()
    v = vm(cpu_sets=[cpu_set(0, 2)])
    assert nfvplace.place(hosts, v, policy="pack").configuration.host == "a"
    assert nfvplace.place(hosts, v, policy="spread").configuration.host == "b"


def test_least_fragmentation_takes_the_tightest_node() -> None:
    tight = host("tight", nodes=[NodeSpec(cores=2), NodeSpec(cores=8)])
    loose = host("loose", nodes=[NodeSpec(cores=3), NodeSpec(cores=3)])
    v = vm(cpu_sets=[cpu_set(0, 4)])
    result = nfvplace.place([loose, tight], v, policy="least-fragmentation")
    assert result.configuration.host == "tight"
    assert result.configuration.cpu_sets[0].numa_node == 0


def test_sequential_placement_until_full() -> None:
    hosts = [host("a"), host("b", nodes=[NodeSpec(cores=2), NodeSpec(cores=2)])]
    fleet = FleetIndex(hosts)
    v = vm(cpu_sets=[cpu_set(0, 4, hugepages_1g=2)])
    placed = []
    while True:
        result = nfvplace.place(fleet, v)
        if not result.ok:
            break
        placed.extend(result.configurations)
        fleet.update_many(result.hosts.values())
        assert len(placed) < 50
    # a: 4 cores and 8 pages per node -> 2 VMs per node; b: 2 cores per node -> 1 per node
    assert len(placed) == 6
    assert violations(hosts, v, placed) == []
    assert result.diagnosis is not None
    assert result.diagnosis.summary.startswith(
        "0/2 hosts fit: 2 have no NUMA node with 2 free core"
    )
    instances = {c.instance for c in placed}
    assert len(instances) == 6


def test_mapping_of_hosts_and_explanation() -> None:
    hosts = {h.id: h for h in fleet3()}
    result = nfvplace.place(hosts, vm(cpu_sets=[cpu_set(0, 2)]), explain=True)
    text = "\n".join(result.explanation)
    assert "placed: vm on a" in text
    assert "3 of 3 hosts passed" in text
    assert "runner-up" in text
    rows = {row.topic: row for row in result.explain_rows}
    assert [row.line() for row in result.explain_rows] == list(result.explanation)
    # the pack score is the sum of its parts, each said in words
    parts = [row for row in result.explain_rows if row.topic.startswith("score: ")]
    assert int(rows["policy score"].value.split()[0]) == sum(int(p.value) for p in parts)
    assert all(p.meaning for p in parts)
    # the exact model's total is the sum of its named costs
    costs = [row for row in result.explain_rows if row.topic.startswith("cost: ")]
    total = float(rows["exact model"].value.split()[2].rstrip(","))
    assert total == sum(int(c.value) for c in costs)


def test_unknown_policy_is_an_error_with_a_code() -> None:
    with pytest.raises(NfvplaceError) as info:
        nfvplace.place(fleet3(), vm(), policy="first-fit")
    assert info.value.code == errors.PLACEMENT_INVALID_POLICY
    with pytest.raises(NfvplaceError) as info:
        nfvplace.place(fleet3(), vm(), colour="red")
    assert info.value.code == errors.PLACEMENT_INVALID_POLICY


def test_no_fit_raises_with_diagnosis() -> None:
    result = nfvplace.place(fleet3(), vm(cpu_sets=[cpu_set(0, 20)]))
    with pytest.raises(NoFitError) as info:
        result.raise_for_status()
    assert info.value.code == errors.PLACEMENT_NO_FIT
    assert info.value.diagnosis.summary.startswith("0/3 hosts fit: 3 have no NUMA node with 10")
    assert result.diagnosis is not None
    assert [r.host for r in result.diagnosis.rejections] == ["a", "b", "c"]
    assert result.diagnosis.to_dict()["hosts_fitting"] == 0


def test_summary_sorts_groups_by_count() -> None:
    hosts = [
        host(f"n{i}", nodes=[NodeSpec(hugepages_1g=1), NodeSpec(hugepages_1g=1)]) for i in range(3)
    ]
    hosts += [host(f"v{i}") for i in range(2)]
    v = vm(
        cpu_sets=[
            cpu_set(
                0,
                4,
                hugepages_1g=4,
                interfaces=({"name": "e", "mode": "sriov", "speed_gbps": 25},),
            )
        ]
    )
    summary = nfvplace.place(hosts, v).diagnosis.summary  # type: ignore[union-attr]
    assert summary == (
        "0/5 hosts fit: 3 have no NUMA node with 4 free 1 GiB pages, "
        "2 lack a free VF on a ≥ 25 Gbps port"
    )


def test_max_candidates_reports_untried_hosts() -> None:
    # both hosts pass the filter, the exact model fails on the first; max_candidates=1 stops there
    bad = host("bad", nodes=[NodeSpec(ports=[PortSpec()]), NodeSpec(cores=0)])
    v = vm(
        cpu_sets=[
            cpu_set(
                0,
                2,
                interfaces=(
                    {"name": "d", "mode": "dedicated", "speed_gbps": 25},
                    {"name": "s", "mode": "sriov", "speed_gbps": 25},
                ),
            )
        ]
    )
    good = host("good", nodes=[NodeSpec(ports=[PortSpec(), PortSpec()]), NodeSpec(cores=1)])
    assert nfvplace.place([bad, good], v).configuration.host == "good"
    limited = nfvplace.place([bad, good], v, max_candidates=1)
    assert not limited.ok
    assert limited.diagnosis is not None
    reasons = {r.host: r.reason for r in limited.diagnosis.rejections}
    assert set(reasons.values()) == {"infeasible", "not_tried"}


def test_variant_for_a_slower_processor() -> None:
    slow = host("slow", model="Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz", frequency=1800)
    v = vm(
        cpu_sets=[cpu_set(0, 4)],
        variants=[
            {
                "name": "slow-cpu",
                "match": {"processor_models": ["Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz"]},
                "cpu_sets": [cpu_set(0, 6)],
            }
        ],
    )
    result = nfvplace.place([slow], v)
    assert result.configuration.variant == "slow-cpu"
    assert len(result.configuration.cpu_sets[0].vcpu_pins) == 6
    fast = nfvplace.place([host("fast")], v)
    assert fast.configuration.variant is None
    assert len(fast.configuration.cpu_sets[0].vcpu_pins) == 4


def test_plain_cloud_vm_pinned_on_one_node() -> None:
    h = host()
    v = vm(vcpus=3, memory_mib=2048)
    result = nfvplace.place([h], v)
    config = result.configuration
    assert len(config.cpu_sets) == 1
    pus = sorted(config.cpu_sets[0].vcpu_pins.values())
    assert len(pus) == 3
    # prefer by default: two vCPUs on the two threads of one core
    assert config.cpu_sets[0].vcpu_pins[0] + 8 == config.cpu_sets[0].vcpu_pins[1]
    claim(h, config)


def test_pci_device_on_the_cpu_set_node() -> None:
    h = host(nodes=[NodeSpec(), NodeSpec(devices=["crypto"])])
    v = vm(cpu_sets=[cpu_set(0, 2)], pci_devices=[{"class": "crypto", "cpu_set": 0}])
    result = nfvplace.place([h], v)
    assert result.ok
    assert result.configuration.pci_devices[0].numa_node == 1
    assert result.configuration.cpu_sets[0].numa_node in (0, 1)


def test_plain_vm_configuration_states_the_policy_applied() -> None:
    config = nfvplace.place([host()], vm(vcpus=2, memory_mib=1024)).configuration
    assert config.thread_policy is not None
    assert config.thread_policy.value == "prefer"
    pinned = nfvplace.place([host()], vm(cpu_sets=[cpu_set(0, 2)])).configuration
    assert pinned.thread_policy is not None
    assert pinned.thread_policy.value == "isolate"
