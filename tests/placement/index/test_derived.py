"""Columns worked out from the index's columns and kept (`DerivedColumns`): whatever the index
rewrites in between (claims, releases, updates, a host added, a copy, a pickle), a read gives what
working the column out afresh gives, and what the filter and the policies read of them is what a
freshly built index gives."""

from __future__ import annotations

import pickle

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.errors import LintError
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex, PlacementResult
from nfvplace.placement.engine.filter import HostCheckRecord, run_filter
from nfvplace.placement.engine.policies import host_keys
from nfvplace.placement.index.derived import DerivedColumns, Rows
from nfvplace.placement.options import Options, Policy
from nfvplace.placement.request import build_request

MIX = make_fleet(14, seed=31)
REQUESTS = request_stream(40, seed=32)
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


def _same_reads(index: FleetIndex, vm: VmDescriptor) -> None:
    """The filter's outcome and every policy's keys over `index` (its kept columns) equal those
    over an index freshly built from its hosts."""
    fresh = FleetIndex(list(index.hosts))
    request = build_request(vm)
    everyone = np.ones(len(index), dtype=np.bool_)
    kept_out = run_filter(index, request, Options(), everyone)
    fresh_out = run_filter(fresh, request, Options(), everyone)
    assert np.array_equal(kept_out.passing, fresh_out.passing)
    assert kept_out.node_ok.keys() == fresh_out.node_ok.keys()
    for part, ok in kept_out.node_ok.items():
        assert np.array_equal(ok, fresh_out.node_ok[part])
    assert [r.hosts.tolist() for r in kept_out.records] == [
        r.hosts.tolist() for r in fresh_out.records
    ]
    for policy in Policy:
        options = Options(policy=policy)
        kept_keys = host_keys(index, request, options, kept_out.node_ok)
        assert np.array_equal(kept_keys, host_keys(fresh, request, options, fresh_out.node_ok))


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(REQUESTS), st.integers(0, 6)), min_size=1, max_size=20))
def test_kept_columns_read_as_a_fresh_index_after_claims_and_releases(
    steps: list[tuple[VmDescriptor, int]],
) -> None:
    fleet = nfvplace.Fleet(MIX)
    placed: list[PlacementResult] = []
    for vm, undo in steps:
        try:
            result = fleet.place(vm)
        except LintError:
            continue
        if result.ok:
            placed.append(result)
        if undo > 4 and placed:
            fleet.release(placed.pop(undo % len(placed)))
        _same_reads(fleet.index, vm)


def test_kept_columns_follow_updates_a_new_host_a_copy_and_a_pickle() -> None:
    fleet = nfvplace.Fleet(MIX[:10])
    index = fleet.index
    for vm in REQUESTS[:8]:
        fleet.place(vm)
        _same_reads(index, vm)
    index.update(MIX[3])  # a host given back as it was: its row rewritten
    _same_reads(index, REQUESTS[0])
    index.update(MIX[11])  # a new host: the index is built again, with new arrays
    _same_reads(index, REQUESTS[1])
    clone = index.copy()
    assert clone.derived is not index.derived
    read_back = pickle.loads(pickle.dumps(index))
    for vm in REQUESTS[8:16]:
        result = nfvplace.place(clone, vm)
        clone.claimed(result.hosts.values(), result.configurations)
        _same_reads(clone, vm)
        _same_reads(index, vm)  # the copy's claims are not the index's
        result = nfvplace.place(read_back, vm)
        read_back.claimed(result.hosts.values(), result.configurations)
        _same_reads(read_back, vm)


@given(
    size=st.integers(1, 30),
    writes=st.lists(st.tuples(st.integers(0, 29), st.integers(-5, 99)), max_size=40),
    reads=st.lists(st.booleans(), max_size=40),
)
@settings(max_examples=100, deadline=None)
def test_a_kept_column_is_worked_out_again_for_each_row_written(
    size: int, writes: list[tuple[int, int]], reads: list[bool]
) -> None:
    """Rows rewritten (each told first, as the index does) between reads, and sources replaced:
    every read equals the column worked out afresh; a column nobody wrote is not worked out."""
    source = np.arange(size, dtype=np.int64)
    derived = DerivedColumns()
    worked: list[int] = []

    def doubled(rows: Rows) -> np.ndarray:
        out = source[rows] * 2 + 1
        worked.append(len(out))
        return out

    assert np.array_equal(derived.column("d", [source], doubled), source * 2 + 1)
    for k, (row, value) in enumerate(writes):
        if row < size:
            derived.changing(row)
            source[row] = value
        if k < len(reads) and reads[k]:
            assert np.array_equal(derived.column("d", [source], doubled), source * 2 + 1)
    derived.column("d", [source], doubled)
    worked.clear()
    derived.column("d", [source], doubled)
    assert worked == []  # nothing written since: the kept column as it is
    source = source.copy()  # other arrays (an index built again): worked out whole
    assert np.array_equal(derived.column("d", [source], doubled), source * 2 + 1)
    assert worked == [size]
    assert pickle.loads(pickle.dumps(derived))._kept == {}


def test_a_record_lists_its_hosts_once_when_read() -> None:
    hit = np.array([False, True, False, True, True])
    record = HostCheckRecord(None, hit)  # type: ignore[arg-type]
    assert record.hosts.tolist() == [1, 3, 4]
    assert record.hosts is record.hosts
