"""Batches of identical VMs (issue 37, item 2): a batch of what `capacity` counts places, one more
is refused with a reason about what the VM asks, through the library, `Fleet.place` and the CLI.

The searches are given a short limit: a batch that only a search stopped by its limit refuses
shows up as a failure here, not as a slow test."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import nfvplace
from bench.hostgen import cloud_vm, make_fleet, small_sriov, vran_du
from nfvplace import errors
from nfvplace.claims import claim
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import BatchItem, place
from nfvplace.placement.reasons import Reason
from nfvplace.placement.result import NoFitError

ROOT = Path(__file__).resolve().parents[3]
LIMIT = {"search_limit_s": 2.0}

TINY = VmDescriptor.model_validate(
    {"schema": "nfvplace/vmd/v1", "name": "tiny", "vcpus": 1, "memory_mib": 256}
)
# the reasons of a refusal that are about what a VM asks (not joint rules: links, anti-affinity)
JOINT = {Reason.link, Reason.affinity}


def _claims_cleanly(
    hosts: list[ComputeHostDescriptor], result: nfvplace.placement.PlacementResult
) -> None:
    current = {h.id: h for h in hosts}
    for config in result.configurations:
        current[config.host] = claim(current[config.host], config)
    assert {h: current[h] for h in result.hosts} == dict(result.hosts)


def _assert_refused(result: Any, asked: int, fit: int) -> None:
    assert not result.ok
    with pytest.raises(NoFitError) as refused:  # the code the CLI (exit 3) and REST (409) give
        result.raise_for_status()
    assert refused.value.code == errors.PLACEMENT_NO_FIT
    summary = result.diagnosis.summary
    assert f"instance {asked}/{asked} does not fit" in summary, summary
    assert f"{fit} instances" in summary, summary
    assert "vSwitch" not in summary, summary
    assert "stopped at its" not in summary, summary
    reasons = {r.reason for r in result.diagnosis.rejections}
    assert reasons, summary
    assert not reasons & JOINT, reasons


EXAMPLES = [
    # the cases: examples/fleet says 164, examples/hosts 88
    ("examples/fleet", TINY, 164),
    ("examples/hosts", TINY, 88),
]


@pytest.mark.parametrize(("folder", "v", "expected"), EXAMPLES, ids=["fleet", "hosts"])
def test_examples_batch_of_capacity_places_and_one_more_is_refused(
    folder: str, v: VmDescriptor, expected: int
) -> None:
    hosts = nfvplace.load(ROOT / folder)
    assert nfvplace.capacity(hosts, v).count == expected
    for count in (expected // 2, expected):
        result = nfvplace.place(hosts, v, count=count, **LIMIT)
        assert result.ok, result.diagnosis and result.diagnosis.summary
        assert len(result.configurations) == count
        assert len({c.instance for c in result.configurations}) == count
        _claims_cleanly(hosts, result)
    _assert_refused(nfvplace.place(hosts, v, count=expected + 1, **LIMIT), expected + 1, expected)


def _generated() -> list[tuple[list[ComputeHostDescriptor], VmDescriptor]]:
    rng = random.Random(7)
    cases = []
    for n, seed in ((8, 1), (20, 2)):
        hosts = make_fleet(n, seed=seed)
        for maker in (small_sriov, vran_du, cloud_vm):
            cases.append((hosts, maker(rng, 0)))
    return cases


@pytest.mark.parametrize(("hosts", "v"), _generated())
@pytest.mark.parametrize("policy", ["pack", "spread", "least-fragmentation"])
def test_generated_fleets_agree_with_capacity(
    hosts: list[ComputeHostDescriptor], v: VmDescriptor, policy: str
) -> None:
    count = nfvplace.capacity(hosts, v, policy=policy).count
    assert count > 0
    result = nfvplace.place(hosts, v, count=count, policy=policy, **LIMIT)
    assert result.ok, result.diagnosis and result.diagnosis.summary
    assert len(result.configurations) == count
    _claims_cleanly(hosts, result)
    refused = nfvplace.place(hosts, v, count=count + 1, policy=policy, **LIMIT)
    _assert_refused(refused, count + 1, count)


def test_copies_the_counting_model_leaves_to_the_engine_agree_with_capacity() -> None:
    hosts = nfvplace.load(ROOT / "examples/hosts")
    two_sets = vm("two-sets", [cpu_set(0, 2), cpu_set(1, 2, first_vcpu=2, pairs=False)])
    count = nfvplace.capacity(hosts, two_sets).count
    assert count > 0
    result = place(hosts, two_sets, count=count, **LIMIT)
    assert result.ok, result.diagnosis and result.diagnosis.summary
    _claims_cleanly(hosts, result)
    _assert_refused(place(hosts, two_sets, count=count + 1, **LIMIT), count + 1, count)


@pytest.mark.parametrize(
    ("policy", "count", "shares"),
    [
        ("pack", 2, {"b": 2}),  # one host is enough: the fuller one (a: 8 free threads, b: 6)
        ("pack", 8, {"a": 8}),  # one host is enough, only a takes 8
        ("pack", 9, {"b": 6, "a": 3}),  # two hosts: the fuller filled first
        ("spread", 2, {"a": 2}),  # a's share of free threads stays the larger: 7/8 > 6/8
        ("spread", 14, {"a": 8, "b": 6}),
        ("least-fragmentation", 2, {"b": 2}),  # the tightest host first
        ("least-fragmentation", 8, {"b": 6, "a": 2}),
    ],
)
def test_copies_are_dealt_by_policy(policy: str, count: int, shares: dict[str, int]) -> None:
    hosts = [
        host("a", nodes=[NodeSpec(cores=4)]),
        host("b", nodes=[NodeSpec(cores=4)], used={0: "x", 4: "x"}),  # core 0 taken
    ]
    assert {h.host: h.count for h in nfvplace.capacity(hosts, TINY).hosts} == {"a": 8, "b": 6}
    result = place(hosts, TINY, count=count, policy=policy, **LIMIT)
    assert result.ok, result.diagnosis and result.diagnosis.summary
    placed: dict[str, int] = {}
    for config in result.configurations:
        placed[config.host] = placed.get(config.host, 0) + 1
    assert placed == shares


def test_fleet_place_claims_the_whole_batch() -> None:
    fleet = nfvplace.Fleet(ROOT / "examples/fleet")
    result = fleet.place(TINY, count=100, **LIMIT)
    assert result.ok
    assert len(result.configurations) == 100
    assert nfvplace.capacity(fleet.hosts, TINY).count == 64
    _assert_refused(fleet.place(TINY, count=65, **LIMIT), 65, 64)
    assert nfvplace.capacity(fleet.hosts, TINY).count == 64  # nothing claimed by the refusal


def test_the_same_vm_twice_in_a_batch_counts_as_one() -> None:
    hosts = nfvplace.load(ROOT / "examples/hosts")
    result = place(hosts, [BatchItem(TINY, 44), BatchItem(TINY, 44)], **LIMIT)
    assert result.ok
    assert len(result.configurations) == 88
    refused = place(hosts, [BatchItem(TINY, 44), BatchItem(TINY, 45)], **LIMIT)
    assert not refused.ok
    assert "instance 45/45 does not fit (88 instances" in refused.diagnosis.summary


def test_max_mode_places_exactly_what_capacity_counts() -> None:
    hosts = nfvplace.load(ROOT / "examples/hosts")
    result = nfvplace.place(hosts, TINY, count=100, mode="max", **LIMIT)
    assert len(result.configurations) == 88
    assert [u.instance for u in result.unplaced] == list(range(89, 101))
    assert all("vSwitch" not in u.reason for u in result.unplaced)


TWO = VmDescriptor.model_validate(
    {"schema": "nfvplace/vmd/v1", "name": "two", "vcpus": 2, "memory_mib": 512}
)


SMALL_AND_LARGE = ("cisco-ucs-2s-manyvfs", "dell-r740-2s-gold-6230-snc2")  # 8 and 40 cores


def test_a_batch_with_another_member_places_on_every_host() -> None:
    # the search went to the largest machine first, and instances of one member were kept in
    # fleet order after it: the hosts before it were never used again (it stopped at its limit)
    hosts = [nfvplace.load(ROOT / f"examples/hosts/{name}.yaml") for name in SMALL_AND_LARGE]
    assert [nfvplace.capacity(hosts, TINY).count, nfvplace.capacity(hosts, TWO).count] == [48, 24]
    result = place(hosts, [BatchItem(TWO, 1), BatchItem(TINY, 40)], **LIMIT)
    assert result.ok, result.diagnosis and result.diagnosis.summary
    _claims_cleanly(hosts, result)


def test_a_batch_with_another_member_is_refused_for_what_the_vms_ask() -> None:
    # 6 cores asked, 5 free: the deepest dead end is one where the instance fits no host at all
    hosts = [host("s0", nodes=[NodeSpec(cores=1)]), host("big", nodes=[NodeSpec(cores=4)])]
    one, two = vm("one", [cpu_set(0, 2)]), vm("two", [cpu_set(0, 4)])
    result = place(hosts, [BatchItem(two, 1), BatchItem(one, 4)], search_limit_s=5.0)
    assert not result.ok
    summary = result.diagnosis.summary
    assert "instance 4/4 does not fit" in summary, summary
    assert "stopped at its" not in summary, summary
    assert {r.reason for r in result.diagnosis.rejections} == {Reason.core_pairs}, summary


# --- property: capacity and batch placement agree on small random fleets --------------------------


@st.composite
def fleets(draw: st.DrawFn) -> list[ComputeHostDescriptor]:
    hosts = []
    for i in range(draw(st.integers(1, 4))):
        nodes = [
            NodeSpec(
                cores=draw(st.sampled_from((1, 2, 3, 4, 6))),
                hugepages_1g=draw(st.sampled_from((0, 1, 4))),
                ports=[PortSpec(vfs=draw(st.sampled_from((1, 3))))] if draw(st.booleans()) else [],
            )
            for _ in range(draw(st.integers(1, 2)))
        ]
        used = dict.fromkeys(draw(st.sets(st.integers(0, 3), max_size=2)), "x")
        hosts.append(host(f"h{i}", nodes=nodes, used=used, smt=draw(st.booleans())))
    return hosts


@st.composite
def vms(draw: st.DrawFn) -> VmDescriptor:
    if draw(st.booleans()):  # floating vCPUs, memory only
        return VmDescriptor.model_validate(
            {
                "schema": "nfvplace/vmd/v1",
                "name": "f",
                "vcpus": draw(st.integers(1, 4)),
                "memory_mib": draw(st.sampled_from((256, 1024, 4096))),
                "cpu_oversubscription": draw(st.booleans()),
            }
        )
    if draw(st.booleans()):  # two cpu-sets: the counting model leaves it to the engine
        return vm("two-sets", [cpu_set(0, 2), cpu_set(1, 2, first_vcpu=2, pairs=False)])
    nic = {"name": "e0", "mode": "sriov", "speed_gbps": 10, "bandwidth_gbps": 1}
    return vm(
        "p",
        [
            cpu_set(
                0,
                draw(st.integers(1, 4)),
                pairs=draw(st.booleans()),
                hugepages_1g=draw(st.sampled_from((0, 1))),
                interfaces=(nic,) if draw(st.booleans()) else (),
            )
        ],
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hosts=fleets(), v=vms(), policy=st.sampled_from(["pack", "spread", "least-fragmentation"]))
def test_batch_of_capacity_places_and_one_more_is_refused(
    hosts: list[ComputeHostDescriptor], v: VmDescriptor, policy: str
) -> None:
    report = nfvplace.capacity(hosts, v, policy=policy)
    count = report.count
    if count:
        result = place(hosts, v, count=count, policy=policy, **LIMIT)
        assert result.ok, result.diagnosis and result.diagnosis.summary
        assert len(result.configurations) == count
        _claims_cleanly(hosts, result)
        half = place(hosts, v, count=(count + 1) // 2, policy=policy, **LIMIT)
        assert half.ok, half.diagnosis and half.diagnosis.summary
        # pack: the fewest hosts (copies the counting model counts; the others go one by one
        # where pack puts a single VM)
        if policy == "pack" and v.name != "two-sets":
            counts = sorted((h.count for h in report.hosts), reverse=True)
            asked = len(half.configurations)
            fewest = next(k for k in range(1, len(counts) + 1) if sum(counts[:k]) >= asked)
            assert len(half.hosts) == fewest
    refused = place(hosts, v, count=count + 1, policy=policy, **LIMIT)
    assert not refused.ok
    assert "vSwitch" not in refused.diagnosis.summary
    assert "stopped at its" not in refused.diagnosis.summary
    reasons = {r.reason for r in refused.diagnosis.rejections}
    assert reasons, refused.diagnosis.summary
    assert not reasons & JOINT, refused.diagnosis.summary


# --- the CLI door -----------------------------------------------------------------------------


def test_cli_count_places_capacity_and_refuses_one_more(tmp_path: Path) -> None:
    from nfvplace.cli import _register, app

    _register()
    (tmp_path / "tiny.yaml").write_text(nfvplace.dump(TINY))
    runner = CliRunner()
    args = ["place", "--hosts", str(ROOT / "examples/hosts"), "--vm", str(tmp_path / "tiny.yaml")]
    ok = runner.invoke(app, [*args, "--count", "88", "--format", "json"])
    assert ok.exit_code == 0, ok.output
    assert len(json.loads(ok.stdout)["configurations"]) == 88
    refused = runner.invoke(app, [*args, "--count", "89"])
    assert refused.exit_code == 3, refused.output
    assert "instance 89/89 does not fit" in refused.output
    assert "5 run out of cores after their share" in refused.output  # exit 3: placement.no_fit
    assert "vSwitch" not in refused.output
