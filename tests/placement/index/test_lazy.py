"""A lazy index (`FleetIndex(lazy=True)`, the service's evaluations) answers as an eager one: its
evaluations and placements are the eager index's, it fills the columns of the kinds read and no
other, the columns it fills equal the eager index's, and claims and updates on it keep both equal.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_differential import chds, vmds

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.errors import LintError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.placement.index import free_of
from nfvplace.placement.index.fleet import _COLUMNS
from nfvplace.placement.index.free import LazyParts

from .test_claimed_deltas import SETTINGS, _plain, _same_columns

MIX = make_fleet(12, seed=31)
REQUESTS = request_stream(30, seed=32)


def _read_every_table(index: FleetIndex) -> None:
    for kind in _COLUMNS:
        index.table(kind)


def _same_evaluations(hosts: list[ComputeHostDescriptor], vm: VmDescriptor) -> None:
    lazy, eager = FleetIndex(hosts, lazy=True), FleetIndex(hosts)
    try:
        want = nfvplace.evaluate(eager, vm)
    except LintError:
        return
    got = nfvplace.evaluate(lazy, vm)
    assert [a.to_dict() for a in got] == [a.to_dict() for a in want]
    verdicts = nfvplace.evaluate(FleetIndex(hosts, lazy=True), vm, configurations=False)
    assert [a.to_dict() for a in verdicts] == [
        a.to_dict() for a in nfvplace.evaluate(eager, vm, configurations=False)
    ]
    _read_every_table(lazy)
    _same_columns(lazy, eager)
    for i in range(len(hosts)):  # every part, read or not yet, is the host's
        assert dict(lazy.free(i).parts) == dict(eager.free(i).parts)


@pytest.mark.parametrize("vm", REQUESTS, ids=lambda vm: vm.name)
def test_a_lazy_index_evaluates_the_realistic_mix_as_an_eager_one(vm: VmDescriptor) -> None:
    _same_evaluations(MIX, vm)


@SETTINGS
@given(st.lists(chds("h"), min_size=1, max_size=3), vmds())
def test_a_lazy_index_evaluates_fuzzed_hosts_as_an_eager_one(
    hosts: list[ComputeHostDescriptor], vm: VmDescriptor
) -> None:
    _same_evaluations([h.model_copy(update={"id": f"h{k}"}) for k, h in enumerate(hosts)], vm)


def test_a_lazy_index_fills_only_the_columns_read() -> None:
    index = FleetIndex(MIX, lazy=True)
    assert index.tables == {}
    assert all(isinstance(index.free(i).parts, LazyParts) for i in range(len(MIX)))
    memory = next(kind for kind in _COLUMNS if kind.name == "memory")
    table = index.table(memory)
    assert index.tables.keys() == {"memory"}
    assert index.table(memory) is table  # filled once
    assert _plain(table) == _plain(FleetIndex(MIX).table(memory))


def test_claims_and_updates_on_a_lazy_index_keep_it_the_eager_one() -> None:
    """Placing, claiming and replacing hosts on a lazy index, some columns filled and some not:
    every decision is the eager index's, and so is every column once read."""
    lazy, eager = FleetIndex(MIX, lazy=True), FleetIndex(MIX)
    for step, vm in enumerate(REQUESTS):
        try:
            want = nfvplace.place(eager, vm)
        except LintError:
            continue
        got = nfvplace.place(lazy, vm)
        assert got.configurations == want.configurations
        assert got.hosts == want.hosts
        eager.claimed(want.hosts.values(), want.configurations)
        lazy.claimed(got.hosts.values(), got.configurations)
        if step % 7 == 3:  # a host replaced as a scheduler's next view of it
            host = eager.hosts[step % len(MIX)]
            eager.update(host)
            lazy.update(host)
    _read_every_table(lazy)
    _same_columns(lazy, eager)
    _same_columns(lazy, FleetIndex(list(eager.hosts)))
    for i, host in enumerate(lazy.hosts):
        assert dict(lazy.free(i).parts) == dict(free_of(host).parts)
