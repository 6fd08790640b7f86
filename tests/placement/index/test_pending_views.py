"""The views of rows with claims pending kept aside (`PendingViews`): once the index's views of the
rows read last let them go, a row with claims pending is read again from the view its claims
worked out, never by building its host. Whatever the sequence of placements, releases and reads,
with a handful of views kept: the same configurations as an index that claims at once, no host
built by a placement, every view kept aside equal to the one read from the built host, and the
hosts and columns those of a fresh index."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.claims import release
from nfvplace.errors import LintError
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.placement.index import fleet as fleet_module
from nfvplace.placement.index import free_of
from nfvplace.placement.index import pending as pending_module
from nfvplace.placement.index.hosts import HostStore
from nfvplace.placement.index.pending import PendingClaims, PendingViews

from .test_claimed_deltas import SETTINGS, _same_columns
from .test_pending import MIX, REQUESTS, _eager, _placed


@pytest.fixture
def few_views(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Two views kept (any index), every one of claims pending aside (more than the hosts of
    the tests); yields how many hosts were built."""
    monkeypatch.setattr(fleet_module, "EVERY_VIEW", 2)
    monkeypatch.setattr(fleet_module, "VIEW_CACHE", 2)
    monkeypatch.setattr(fleet_module, "PENDING_VIEWS", 64)
    builds = [0]
    built = pending_module.built

    def counted(*args: object) -> object:
        builds[0] += 1
        return built(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(pending_module, "built", counted)
    return builds


def _check_kept(index: FleetIndex) -> None:
    """Every view kept aside is of the row's claims pending now, and equals its host's read."""
    for i, (version, free) in index.kept._views.items():
        assert version is index.pending[i]
        assert free == free_of(index.hosts[i])


def test_a_row_with_claims_pending_is_read_again_without_a_build(few_views: list[int]) -> None:
    fleet, reader = nfvplace.Fleet(make_fleet(40, seed=43)), FleetIndex(make_fleet(40, seed=43))
    for vm in request_stream(120, seed=44):
        got = fleet.place(vm)
        assert few_views[0] == 0  # no host built by a placement (the reader's results build)
        assert got.configurations == _eager(reader, vm).configurations
        few_views[0] = 0
    index = fleet.index
    assert len(index.kept) > 10
    assert len(index._free) == 2
    assert all(p.built is None for p in index.pending.values())
    _check_kept(index)
    assert fleet.hosts == list(reader.hosts)
    _same_columns(index, FleetIndex(list(index.hosts)))


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.sampled_from(("place", "place", "place", "release", "read")),
            st.sampled_from(REQUESTS),
            st.integers(0, 50),
        ),
        min_size=1,
        max_size=40,
    ),
    st.booleans(),
)
def test_views_kept_aside_read_as_the_claims_made_at_once(
    steps: list[tuple[str, VmDescriptor, int]], compact: bool
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fleet_module, "EVERY_VIEW", 2)
        patch.setattr(fleet_module, "VIEW_CACHE", 2)
        patch.setattr(fleet_module, "PENDING_VIEWS", 3)
        index, reader = FleetIndex(MIX, compact=compact), FleetIndex(MIX)
        if isinstance(index.store, HostStore):
            index.store.hot_size = 2
        placed: list[VmConfiguration] = []
        for op, vm, k in steps:
            if op == "read":
                assert index.hosts[k % len(index)] == reader.hosts[k % len(index)]
            elif op == "release" and placed:
                config = placed.pop(k % len(placed))
                index.claimed([release(index.host(config.host), config)])
                reader.claimed([release(reader.host(config.host), config)])
            elif op == "place":
                try:
                    got, want = _placed(index, vm), _eager(reader, vm)
                except LintError:
                    continue
                assert got.configurations == want.configurations
                placed.extend(got.configurations)
            assert len(index.kept) <= (2 if compact else 3)
        _check_kept(index)
        assert list(index.hosts) == list(reader.hosts)
        _same_columns(index, FleetIndex(list(index.hosts)))


def test_a_view_kept_aside_is_of_the_claims_pending_now() -> None:
    """A view is handed back only for the very claims pending it was kept for, once."""
    views, free = PendingViews(), free_of(MIX[0])
    first, later = PendingClaims(()), PendingClaims(())
    views.keep(0, first, free, 2)
    views.keep(1, MIX[1], free, 2)  # a descriptor's view: not kept aside (read again cheaply)
    assert len(views) == 1
    assert views.take(0, later) is None
    assert len(views) == 0
    views.keep(0, first, free, 2)
    assert views.copy().take(0, first) is free
    assert views.take(0, first) is free
    assert views.take(0, first) is None
    for i in range(4):
        views.keep(i, first, free, 2)
    assert sorted(views._views) == [2, 3]
    views.keep(5, first, free, 0)
    assert 5 not in views._views
