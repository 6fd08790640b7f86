"""A refused placement's rejections read the same whenever they are read: as the hosts were when
the placement was refused, however the fleet changed since (placements, releases, added hosts)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, cast

import builders
import numpy as np
import pytest
from builders import NodeSpec, PortSpec, cpu_set, host
from hypothesis import given, settings
from hypothesis import strategies as st

import nfvplace
from bench.hostgen import impossible_requests, make_fleet, request_stream
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.models.vnf import VnfTemplate
from nfvplace.placement import FleetIndex, PlacementResult
from nfvplace.placement.engine import rejections
from nfvplace.placement.engine.rejections import LiveGroup, RejectionList
from nfvplace.placement.result import RejectionRow

Read = tuple[str, tuple[RejectionRow, ...]]  # a diagnosis as read: its summary and every row


def read(result: PlacementResult) -> Read | None:
    diagnosis = result.diagnosis
    if diagnosis is None:
        return None
    rows = tuple(
        (r.host, r.reason, r.message, r.summary, r.requested, r.available, r.stage)
        for r in diagnosis.rejections
    )
    return diagnosis.summary, rows


def template(vm: VmDescriptor, count: int, other: VmDescriptor | None = None) -> VnfTemplate:
    """`count` copies of `vm` (placed by capacity's count, refused with the engine's reasons over
    the whole fleet), or with `other` kept apart from it (the joint search's diagnosis)."""
    members: list[dict[str, Any]] = [
        {"name": "a", "descriptor": vm.model_dump(by_alias=True), "count": count}
    ]
    extra: dict[str, Any] = {}
    if other is not None:
        members.append({"name": "b", "descriptor": other.model_dump(by_alias=True)})
        extra["anti_affinity"] = [{"members": ["a", "b"]}]
    return VnfTemplate.model_validate(
        {"schema": "nfvplace/vnf/v1", "name": "t", "members": members, **extra}
    )


Step = Callable[[nfvplace.Fleet, list[PlacementResult]], PlacementResult | None]


def _release(k: int) -> Step:
    def step(fleet: nfvplace.Fleet, done: list[PlacementResult]) -> None:
        if done:
            fleet.release(done[k % len(done)])  # twice is a no-op

    return step


def _place(what: VmDescriptor | VnfTemplate) -> Step:
    # a joint search that stopped on time would say where it stopped: give it all the time
    return lambda fleet, done: fleet.place(what, search_limit_s=60)


def steps(seed: int, n: int) -> list[Step]:
    """Placements of the realistic mix, VNF templates now and then, refusals, and releases of
    earlier placements: the same steps for every fleet they run on."""
    rng = random.Random(seed)
    vms = request_stream(n, seed=seed)
    out: list[Step] = []
    for k, vm in enumerate(vms):
        roll = rng.random()
        if k % 10 == 9:  # a refusal over the whole fleet, whatever the fleet's state
            out.append(_place(impossible_requests(1, seed=k)[0]))
        elif roll < 0.15:
            out.append(_release(k))
        elif roll < 0.25:
            count, other = rng.choice([(3, None), (2, vms[(k + 1) % n]), (6, None)])
            out.append(_place(template(vm, count, other)))
        else:
            out.append(_place(vm))
    return out


def run(hosts: list[ComputeHostDescriptor], plan: list[Step], at_once: bool) -> list[Read | None]:
    """The diagnoses of the steps, read right after each step, or (kept) all at the end."""
    fleet = nfvplace.Fleet(hosts)
    done: list[PlacementResult] = []
    kept: list[PlacementResult] = []
    reads: list[Read | None] = []
    for step in plan:
        result = step(fleet, done)
        if result is None:
            continue
        if result.ok:
            done.append(result)
        if at_once:
            reads.append(read(result))
        else:
            kept.append(result)
    return reads if at_once else [read(r) for r in kept]


@given(seed=st.integers(0, 10_000))
@settings(max_examples=8, deadline=None)
def test_kept_results_read_as_results_read_at_once(seed: int) -> None:
    hosts = make_fleet(6, seed=seed)
    plan = steps(seed, 70)
    at_once = run(hosts, plan, at_once=True)
    late = run(hosts, plan, at_once=False)
    assert sum(r is not None for r in at_once) >= 7  # refusals to read, kept across writes
    assert late == at_once


def test_the_reproduction_reads_the_same() -> None:
    """The reproduction of the bug: identical fleets, one result read at once, one at the end."""
    hosts = make_fleet(20, seed=3)
    a, b = nfvplace.Fleet(hosts), nfvplace.Fleet(hosts)
    held = []
    for vm in request_stream(300, seed=4):
        ra, rb = a.place(vm), b.place(vm)
        if not ra.ok:
            held.append((ra, read(rb)))
    assert len(held) > 100
    assert [read(ra) for ra, _ in held] == [now for _, now in held]


def test_a_host_added_with_more_nodes_rebuilds_the_index_and_kept_reasons_stay() -> None:
    """A new host with more NUMA nodes than any other rebuilds the index (wider arrays): a kept
    result still reads its own."""
    hosts = make_fleet(8, seed=5)
    wide = max(make_fleet(40, seed=6), key=lambda h: len(h.numa_nodes))
    few = [h for h in hosts if len(h.numa_nodes) < len(wide.numa_nodes)]
    assert few, "the fleet needs hosts with fewer nodes than the one added"
    fleet = nfvplace.Fleet(few)
    refused = fleet.place(impossible_requests(1)[0])
    assert not refused.ok
    expected = read(nfvplace.Fleet(few).place(impossible_requests(1)[0]))
    fleet.update(wide.model_copy(update={"id": "wide"}))
    for vm in request_stream(30, seed=7):
        fleet.place(vm)
    assert read(refused) == expected


def test_the_exact_stage_and_untried_hosts_read_as_when_refused() -> None:
    """The exact model's refusal is named when the host fails (from the host's free resources as
    the attempt read them), untried hosts say the limit: neither reads the index later."""
    bad = host("bad", nodes=[NodeSpec(ports=[PortSpec()]), NodeSpec(cores=0)])
    good = host("good", nodes=[NodeSpec(ports=[PortSpec(), PortSpec()]), NodeSpec(cores=1)])
    interfaces = (
        {"name": "d", "mode": "dedicated", "speed_gbps": 25},
        {"name": "s", "mode": "sriov", "speed_gbps": 25},
    )
    v = builders.vm(cpu_sets=[cpu_set(0, 2, interfaces=interfaces)])
    fleet = nfvplace.Fleet([bad, good])
    kept = fleet.place(v, max_candidates=1)
    expected = read(nfvplace.Fleet([bad, good]).place(v, max_candidates=1))
    assert expected is not None
    assert {row[1] for row in expected[1]} == {"infeasible", "not_tried"}
    placed = fleet.place(v)
    assert placed.ok
    fleet.update(bad.model_copy(update={"numa_nodes": bad.numa_nodes[:1]}))
    fleet.release(placed)
    assert read(kept) == expected


def _pin_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The hosts whose rejection a live group is asked to build before a rewrite."""
    calls: list[int] = []
    original = rejections.LiveGroup.keep

    def counted(self: LiveGroup, position: int) -> None:
        calls.append(position)
        original(self, position)

    monkeypatch.setattr(rejections.LiveGroup, "keep", counted)
    return calls


def test_a_result_not_kept_costs_no_pinning(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _pin_calls(monkeypatch)
    fleet = nfvplace.Fleet(make_fleet(10, seed=1))
    huge = impossible_requests(3)
    for k, vm in enumerate(request_stream(40, seed=2)):
        fleet.place(huge[k % 3])  # refused, dropped at once
        read(fleet.place(huge[(k + 1) % 3]))  # refused, read at once
        fleet.place(vm)  # claims: rewrites a row
    assert calls == []
    assert len(fleet.index.watchers) <= 1  # at most the last refusal, dead or not yet told


def test_a_kept_result_pins_each_rewritten_host_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _pin_calls(monkeypatch)
    fleet = nfvplace.Fleet(make_fleet(10, seed=1))
    kept = fleet.place(impossible_requests(1)[0])
    assert kept.diagnosis is not None
    groups = cast(RejectionList, kept.diagnosis.rejections)._groups
    live = [g for g in groups if isinstance(g, LiveGroup)]
    assert live
    placed = [fleet.place(vm) for vm in request_stream(30, seed=2)]
    rewritten = {fleet.index.positions[h] for r in placed for h in r.hosts}
    assert set(calls) == rewritten
    assert {i for g in live for i in g.pinned} == rewritten & {
        int(i) for g in live for i in g.hosts
    }
    len(kept.diagnosis.rejections)  # read: the index forgets it at its next write
    fleet.place(request_stream(1, seed=9)[0])
    assert len(fleet.index.watchers) == 0


@given(
    hosts=st.lists(st.integers(0, 30), min_size=1, max_size=12, unique=True).map(sorted),
    writes=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 99)), max_size=30),
)
@settings(max_examples=80, deadline=None)
def test_a_live_group_gives_its_hosts_as_they_were(
    hosts: list[int], writes: list[tuple[int, int]]
) -> None:
    """Rows built from a column that is rewritten after the group was made: pinned before each
    write, built when read, in the group's order, each host as it was."""
    column = list(range(31))
    before = list(column)

    def rows_of(at: np.ndarray) -> list[RejectionRow]:
        return [
            (f"h{i:02d}", "r", f"has {column[i]}", "s", None, float(column[i]), "filter")
            for i in at.tolist()
        ]

    group = LiveGroup(cast(FleetIndex, None), np.array(hosts, dtype=np.int64), rows_of)
    for position, value in writes:
        group.pin(position)
        column[position] = value
    expected = [
        (f"h{i:02d}", "r", f"has {before[i]}", "s", None, float(before[i]), "filter") for i in hosts
    ]
    assert list(group.rows()) == expected
    assert set(group.pinned) == {p for p, _ in writes} & set(hosts)


SMALL = FleetIndex(make_fleet(8, seed=4))


@given(
    groups=st.lists(
        st.lists(st.integers(0, 7), min_size=1, max_size=8, unique=True).map(sorted),
        min_size=1,
        max_size=3,
    ),
    writes=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 99)), max_size=20),
)
@settings(max_examples=80, deadline=None)
def test_a_kept_list_reads_every_group_as_it_was(
    groups: list[list[int]], writes: list[tuple[int, int]]
) -> None:
    """Groups that may share hosts (a host in two groups is built in each), told through the
    index's watchers before each write: the list reads as it would have when made."""
    column = list(range(8))

    def rows_for(tag: int) -> Callable[[np.ndarray], list[RejectionRow]]:
        def rows_of(at: np.ndarray) -> list[RejectionRow]:
            return [
                (SMALL.host_ids[i], f"r{tag}", f"has {column[i]}", "s", None, None, "filter")
                for i in at.tolist()
            ]

        return rows_of

    def made() -> RejectionList:
        return RejectionList(
            [
                LiveGroup(SMALL, np.array(g, dtype=np.int64), rows_for(k))
                for k, g in enumerate(groups)
            ]
        )

    expected = list(made())
    kept = made()
    for row, value in writes:
        SMALL.watchers.changing(SMALL, row)
        column[row] = value
    assert list(kept) == expected
