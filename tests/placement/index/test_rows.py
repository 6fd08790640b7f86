"""Rows of a fleet index read as a fleet of their own: the filter gives, row for row, what it gives
on the whole index (every check is per host), whatever rows are taken and in whatever order."""

from __future__ import annotations

import numpy as np
import pytest
from builders import host, vm

from bench.hostgen import make_fleet, request_stream
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.placement.engine.filter import run_filter
from nfvplace.placement.index.rows import FleetRows
from nfvplace.placement.options import parse_options
from nfvplace.placement.request import build_request
from nfvplace.placement.resources.impact import IMPACT


@pytest.fixture(scope="module")
def fleet() -> FleetIndex:
    return FleetIndex(make_fleet(120, seed=3))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_filter_on_rows_is_the_filter_on_the_index_row_for_row(
    fleet: FleetIndex, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    options = parse_options()
    everyone = np.ones(len(fleet), dtype=np.bool_)
    for vm_ in request_stream(12, seed=seed):
        request = build_request(vm_, None)
        whole = run_filter(fleet, request, options, everyone)
        rows = rng.permutation(len(fleet))[: rng.integers(1, 40)]
        taken = FleetRows(fleet, rows)
        part = run_filter(taken, request, options, np.ones(len(rows), dtype=np.bool_))
        assert part.passing.tolist() == whole.passing[rows].tolist()
        assert part.node_ok.keys() == whole.node_ok.keys()
        for key, ok in part.node_ok.items():
            assert ok.tolist() == whole.node_ok[key][rows].tolist()
        assert taken.host_ids == [fleet.host_ids[i] for i in rows]


def test_per_host_mappings_follow_their_rows() -> None:
    """The impact kind's instances (VM name -> host -> count) for the rows taken only."""
    running = ({"id": "x-1", "vm": "x"}, {"id": "x-2", "vm": "x"})
    index = FleetIndex([host("a"), host("b", instances=running), host("c", instances=running[:1])])
    taken = FleetRows(index, np.array([2, 0, 1]))
    table = taken.table(IMPACT)
    assert table.count("x", len(taken)).tolist() == [1, 0, 2]
    assert table.vm_names == {0: {"x"}, 2: {"x"}}
    assert taken.hosts[0] is index.hosts[2]
    assert [h.id for h in taken.hosts] == ["c", "a", "b"]
    assert taken.free(1) is index.free(0)


def test_a_check_on_the_descriptors_reads_the_rows_hosts() -> None:
    """The processor-architecture check reads every host's descriptor (not a column)."""

    def on(name: str, architecture: str) -> ComputeHostDescriptor:
        plain = host(name)
        processor = plain.processor.model_copy(update={"architecture": architecture})
        return plain.model_copy(update={"processor": processor})

    index = FleetIndex([on("a", "aarch64"), on("b", "x86_64"), on("c", "aarch64")])
    request = build_request(vm(processor={"architecture": "aarch64"}), None)
    taken = FleetRows(index, np.array([1, 2]))
    outcome = run_filter(taken, request, parse_options(), np.ones(2, dtype=np.bool_))
    assert outcome.passing.tolist() == [False, True]
