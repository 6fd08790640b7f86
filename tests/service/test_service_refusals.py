"""A worker's 409 no_fit with its rejections kept across refusals (`service.refusals`): the
document is byte for byte the one `Diagnosis.to_dict` then `to_json` give, whatever changed on
the fleet between two refusals of the same request (placements, releases, hosts reported again,
deleted and registered), over SQLite and PostgreSQL."""

from __future__ import annotations

import gc
import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import to_json
from service_hosts import host

from bench.hostgen import cloud_vm, impossible_requests, make_fleet, small_sriov, vran_du
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex, place
from nfvplace.placement.engine.rejections import Group, LiveGroup, RejectionList
from nfvplace.placement.result import Diagnosis, RejectionRow
from nfvplace.service.metrics import Metrics
from nfvplace.service.placing import PlacementRequest, Placements
from nfvplace.service.problems import ProblemError, Spliced, problem_body, spliced_json
from nfvplace.service.refusals import KeptRefusals, refusal, shape_of
from nfvplace.store import HostInUseError, Store

HOSTS = 24
OTHER = small_sriov(random.Random(1), 0)
ASKS = (vran_du, small_sriov, cloud_vm)


@pytest.fixture
def worker(db_url: str) -> Iterator[Placements]:
    store = Store.open(db_url)
    for chd in make_fleet(HOSTS, seed=3):
        store.put_host(chd)
    yield Placements(store, place, Metrics(), max_attempts=5)
    store.close()


def request(vmd: VmDescriptor) -> PlacementRequest:
    return PlacementRequest(vmd, {"vm": vmd.model_dump(mode="json")})


def refused(worker: Placements, vmd: VmDescriptor) -> ProblemError | None:
    try:
        worker.place(request(vmd), None)
    except ProblemError as exc:
        return exc
    return None


def rendered(exc: ProblemError) -> bytes:
    body = problem_body(exc.status, exc.code, exc.detail, None, **exc.extra)
    return (
        to_json(body, inf_nan_mode="null")
        if exc.last is None
        else spliced_json(Spliced(body, exc.last))
    )


def fresh(worker: Placements, vmd: VmDescriptor, exc: ProblemError) -> bytes:
    """The document the engine's refusal on the worker's index gives now, built as before."""
    diagnosis = worker.live.placer(worker.live._fleet(), vmd, policy="pack").diagnosis
    assert diagnosis is not None
    body = problem_body(
        exc.status, exc.code, diagnosis.summary, None, diagnosis=diagnosis.to_dict()
    )
    return to_json(body, inf_nan_mode="null")


def report(host_id: str, rng: random.Random) -> ComputeHostDescriptor:
    """A host reported by its agent: one of the fleet's machines, of some use."""
    other = make_fleet(1, seed=rng.randrange(10_000))[0]
    return other.model_copy(update={"id": host_id})


def step(worker: Placements, rng: random.Random, placed: list[str], k: int) -> None:
    """One change of the fleet: a placement, a release, a host reported again, a host deleted
    (and registered again later)."""
    store = worker.store
    kind = rng.choice(("place", "place", "place", "release", "report", "delete"))
    if kind == "place":
        maker = rng.choice(ASKS)
        try:
            answer = worker.place(request(maker(rng, k)), None)
            placed.append(answer.document()["id"])
        except ProblemError:
            pass
    elif kind == "release" and placed:
        store.release_placement(placed.pop(rng.randrange(len(placed))))
    elif kind == "report":
        store.put_host(report(rng.choice(store.list_hosts()).id, rng))
    elif kind == "delete":
        victim = rng.choice(store.list_hosts()).id
        try:
            store.delete_host(victim)
        except HostInUseError:
            return
        store.put_host(report(victim, rng))  # back, at the end of a new index


@pytest.mark.parametrize("seed", range(4))
def test_kept_document_is_a_fresh_one(worker: Placements, seed: int) -> None:
    rng = random.Random(seed)
    asks = [*impossible_requests(3, seed=seed), vran_du(rng, 0), small_sriov(rng, 0)]
    placed: list[str] = []
    checked = 0
    for k in range(40):
        step(worker, rng, placed, k)
        vmd = rng.choice(asks).model_copy(update={"name": f"ask-{k}"})
        exc = refused(worker, vmd)
        if exc is None:
            continue
        assert rendered(exc) == fresh(worker, vmd, exc), k
        checked += 1
    assert checked >= 10
    assert len(worker.live.refusals) >= 1


def test_a_refusal_read_after_writes_reads_as_it_was(worker: Placements) -> None:
    """Two refusals of one request made at once, the index then written (placements claimed on
    it), then one rendered from kept rows and the other built: the same document."""
    live, (ask,) = worker.live, impossible_requests(1)
    refused(worker, ask)  # rows kept for its shape
    decisions = []
    for _ in range(2):
        decisions.append(live.decide(worker._ask(request(ask), "dry-run", 0), claim=False))
    rng = random.Random(5)
    claimed = sum(refused(worker, maker(rng, k)) is None for k in range(12) for maker in ASKS)
    assert claimed >= 3
    kept, built = decisions
    assert kept.versions is not None
    shape = shape_of(ask, {"policy": "pack", "explain": False})
    diagnosis = kept.result.diagnosis
    assert diagnosis is not None
    assert built.result.diagnosis is not None
    found = refusal(diagnosis, live.refusals.view(shape, kept.versions))
    assert found is not None
    document: dict[str, Any] = dict(found.document)
    text = spliced_json(Spliced({"diagnosis": document}, found.rejections))
    assert text == to_json({"diagnosis": built.result.diagnosis.to_dict()}, inf_nan_mode="null")


@pytest.mark.parametrize(("shapes", "rows", "kept"), [(2, 10_000, 2), (8, 10_000, 4), (8, 12, 1)])
def test_the_shapes_kept_are_bounded(shapes: int, rows: int, kept: int) -> None:
    """At most `shapes` request shapes, and `rows` rows over all of them (the last one kept)."""
    memo = KeptRefusals(shapes=shapes, rows=rows)
    index = FleetIndex(make_fleet(8, seed=1))
    for k, ask in enumerate(impossible_requests(4)):
        result = place(index, ask)
        assert result.diagnosis is not None
        assert refusal(result.diagnosis, memo.view(k, memo.versions(index))) is not None
    assert len(memo) == kept


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ({"name": "x-1"}, {"name": "x-2"}, True),  # an instance's name says nothing of its rows
        ({"name": "x-1"}, {"name": "x-1", "cpu_sets": OTHER.cpu_sets}, False),
    ],
)
def test_shape_of(a: dict[str, Any], b: dict[str, Any], same: bool) -> None:
    ask = impossible_requests(1)[0]
    first = shape_of(ask.model_copy(update=a), {"policy": "pack"})
    second = shape_of(ask.model_copy(update=b), {"policy": "pack"})
    assert (first == second) is same
    assert shape_of(ask, {"policy": "pack"}) != shape_of(ask, {"policy": "spread"})
    assert shape_of((), {}) is None


def test_an_empty_fleet_or_a_read_diagnosis_is_not_kept() -> None:
    memo = KeptRefusals()
    index = FleetIndex(make_fleet(4, seed=2))
    (ask,) = impossible_requests(1)
    result = place(index, ask)
    assert result.diagnosis is not None
    result.diagnosis.to_dict()  # read: the list is built
    view = memo.view("s", memo.versions(index))
    assert refusal(result.diagnosis, view) is None
    assert refusal(Diagnosis(0, 0, (), "0/0 hosts fit"), view) is None


def test_versions_follow_the_index() -> None:
    """A rewritten row gets a new version, the others keep theirs; an index that rebuilt (a host
    with more NUMA nodes than any before) or another index gives every row a new one."""
    memo = KeptRefusals()
    hosts = [ComputeHostDescriptor.model_validate(host(f"h{k}", nodes=1)) for k in range(3)]
    index = FleetIndex(hosts)
    first = memo.versions(index)
    index.update(ComputeHostDescriptor.model_validate(host("h1", nodes=1, cores=6)))
    second = memo.versions(index)
    assert second.epoch == first.epoch
    assert [a == b for a, b in zip(first.at, second.at, strict=True)] == [True, False, True]
    index.update(ComputeHostDescriptor.model_validate(host("h2", nodes=2)))
    third = memo.versions(index)
    assert third.epoch > second.epoch
    assert min(third.at) > max(second.at)
    assert memo.versions(FleetIndex(hosts)).epoch > third.epoch


def test_a_refusal_is_worded_on_its_own_index_after_the_worker_built_another() -> None:
    """The worker may build a new index (hosts came) between deciding a refusal and wording its
    409 outside the lock: the refusal's rows are still placed by the hosts of the index it was
    decided on, even when nothing else holds that index any more."""
    memo = KeptRefusals()
    hosts = make_fleet(3, seed=4)
    index = FleetIndex(hosts)
    versions = memo.versions(index)
    rows = [
        (h.id, "processor_model", f"{h.id} refused", "refused", None, None, "filter") for h in hosts
    ]
    diagnosis = Diagnosis(3, 0, RejectionList([lambda: rows[::-1]]), "0/3 hosts fit")
    memo.versions(FleetIndex(hosts[:2]))  # the worker's next index; the first is dropped
    del index
    gc.collect()
    found = refusal(diagnosis, memo.view("s", versions))
    assert found is not None
    text = spliced_json(Spliced({"diagnosis": dict(found.document)}, found.rejections))
    assert text == to_json({"diagnosis": diagnosis.to_dict()}, inf_nan_mode="null")


SPLICED = 6  # hosts of the index the lists below are spliced over
HOST = st.integers(0, SPLICED - 1)


def refusal_groups(
    index: FleetIndex, state: list[int], owners: list[list[int]], fixed: bool
) -> list[Group]:
    """Live groups of the hosts in `owners` (several may hold one host), each host's row read
    from `state` as the engine's read the index; with `fixed`, a group that reads nothing."""

    def rows_of(k: int) -> Any:
        def rows(hosts: Any) -> list[RejectionRow]:
            ids = index.host_ids
            return [
                (
                    ids[i],
                    "processor_model",
                    f"{ids[i]} in {k} at {state[i]}",
                    f"group {k}",
                    float(state[i]),
                    None,
                    "filter",
                )
                for i in hosts.tolist()
            ]

        return rows

    groups: list[Group] = [
        LiveGroup(
            index,
            np.array(sorted(set(hosts)), np.int64),
            rows_of(k),
            (f"group {k}", "processor_model"),
        )
        for k, hosts in enumerate(owners)
        if hosts
    ]
    if fixed:
        ids = index.host_ids
        groups.append(lambda: [(ids[0], "cpu", "counted", "fixed", 1.0, 0.0, "filter")])
    return groups


STEP = st.tuples(
    st.lists(HOST, max_size=3),  # hosts rewritten since (a new version each)
    st.lists(st.lists(HOST, max_size=SPLICED), max_size=4),  # the groups' hosts
    st.integers(0, 1),  # the request's shape
    st.booleans(),  # a group that reads nothing the index rewrites
)


@settings(max_examples=150, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=8))
def test_a_spliced_list_is_a_fresh_one(steps: list[Any]) -> None:
    """Refusals of two shapes over one index, hosts rewritten between them, moving from group to
    group, in none, in several, beside rows that read nothing: each refusal's 409 is the one its
    groups give built afresh, whether its list was spliced from the shape's last, built group by
    group, or both."""
    memo = KeptRefusals()
    index = FleetIndex(make_fleet(SPLICED, seed=1))
    memo.versions(index)
    state = [0] * SPLICED
    for rewritten, owners, shape, fixed in steps:
        for p in rewritten:
            state[p] += 1
            assert memo.pin(index, p)
        versions = memo.versions(index)
        kept = Diagnosis(
            SPLICED, 0, RejectionList(refusal_groups(index, state, owners, fixed)), "x"
        )
        built = Diagnosis(
            SPLICED, 0, RejectionList(refusal_groups(index, state, owners, fixed)), "x"
        )
        found = refusal(kept, memo.view(shape, versions))
        assert found is not None
        text = spliced_json(Spliced({"diagnosis": dict(found.document)}, found.rejections))
        assert text == to_json({"diagnosis": built.to_dict()}, inf_nan_mode="null")
        assert found.reasons == {r["reason"] for r in built.to_dict()["rejections"]}  # type: ignore[union-attr]
