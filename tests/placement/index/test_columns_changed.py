"""A kind that refills only the nodes a claim changed (`ColumnsChanged.fill_changed`) leaves its
row exactly as a whole `fill` of the new free resources: on the realistic mix and on fuzzed hosts,
after claims and releases, with the new view sharing the unchanged nodes' objects (`free_of` with
the version before, `free_claimed`) and with none shared (every node worked again)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_differential import chds, vmds

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.claims import release
from nfvplace.errors import LintError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.placement.index import free_of
from nfvplace.placement.index.free import free_claimed
from nfvplace.placement.resources import implementing
from nfvplace.placement.resources.base import HostFree
from nfvplace.placement.resources.stages import ColumnsChanged

from .test_claimed_deltas import SETTINGS, _plain

_CHANGING: tuple[ColumnsChanged[Any], ...] = implementing(ColumnsChanged)


def test_the_kinds_with_the_most_nodes_refill_only_what_changed() -> None:
    assert {kind.name for kind in _CHANGING} >= {"cpu", "memory", "nics"}


def _check(index: FleetIndex, i: int, host: ComputeHostDescriptor, before: HostFree) -> None:
    """Row i refilled from `before` to each view of `host`, against a whole fill of it."""
    for after in (free_of(host, (index.hosts[i], before)), free_of(host)):
        for kind in _CHANGING:
            changed, whole = index.tables[kind.name].copy(), index.tables[kind.name].copy()
            kind.fill_changed(changed, i, after, before, index.vocab)
            kind.fill(whole, i, host, after, index.vocab)
            assert _plain(changed) == _plain(whole), kind.name


def _run(hosts: list[ComputeHostDescriptor], steps: list[tuple[VmDescriptor, bool]]) -> int:
    """Place each VM (or release the last placement) on `hosts`, checking every claimed row."""
    index, placed, checked = FleetIndex(hosts), [], 0
    for vm, undo in steps:
        if undo and placed:
            config = placed.pop()
            i = index.positions[config.host]
            host = release(index.hosts[i], config)
            _check(index, i, host, index.free(i))
            index.claimed([host])
            continue
        try:
            result = nfvplace.place(index, vm)
        except LintError:
            continue
        for config in result.configurations:
            i = index.positions[config.host]
            before, host = index.free(i), result.hosts[config.host]
            _check(index, i, host, before)
            claimed = free_claimed(host, (index.hosts[i], before), config)
            for kind in _CHANGING:
                changed = index.tables[kind.name].copy()
                kind.fill_changed(changed, i, claimed, before, index.vocab)
                whole = index.tables[kind.name].copy()
                kind.fill(whole, i, host, claimed, index.vocab)
                assert _plain(changed) == _plain(whole), kind.name
            checked += 1
        index.claimed(result.hosts.values(), result.configurations)
        placed += result.configurations
    return checked


@pytest.mark.parametrize("seed", [3, 7])
def test_claims_on_the_realistic_mix_refill_as_a_whole_fill(seed: int) -> None:
    vms = request_stream(40, seed=seed)
    assert _run(make_fleet(10, seed=seed), [(vm, k % 7 == 6) for k, vm in enumerate(vms)]) > 20


@SETTINGS
@given(
    st.lists(chds("h"), min_size=1, max_size=3),
    st.lists(st.tuples(vmds(), st.booleans()), min_size=1, max_size=8),
)
def test_claims_on_fuzzed_hosts_refill_as_a_whole_fill(
    hosts: list[ComputeHostDescriptor], steps: list[tuple[VmDescriptor, bool]]
) -> None:
    _run([h.model_copy(update={"id": f"h{k}"}) for k, h in enumerate(hosts)], steps)
