"""The store's double-claim guard (store/resources.py): every kind that says its configurations
hold units alone, or take shares of a pool, is guarded; a unit of any of them committed twice, or
a pool taken past its capacity, is refused the same way on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from service_hosts import host
from stored import commit, config

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.placement.resources import CACHE_WAYS, KINDS, MEMORY
from nfvplace.placement.resources.cpu import CPU
from nfvplace.placement.resources.devices import DEVICES
from nfvplace.placement.resources.nics import NICS
from nfvplace.placement.resources.stages import HoldsShares, HoldsUnits
from nfvplace.store import Snapshot, StaleSnapshot, Store
from nfvplace.store.resources import HOLDERS, SHARERS


def test_the_guard_loops_over_every_kind_that_holds_units() -> None:
    assert tuple(k for k in KINDS if isinstance(k, HoldsUnits)) == HOLDERS
    assert {k.name for k in HOLDERS} == {CPU.name, NICS.name, DEVICES.name, CACHE_WAYS.name}


def test_the_guard_counts_the_shares_of_every_kind_that_takes_them() -> None:
    assert tuple(k for k in KINDS if isinstance(k, HoldsShares)) == SHARERS
    # the counters' table is keyed without a kind: a second kind here needs a migration adding one
    assert [k.name for k in SHARERS] == [MEMORY.name]


def host_with_caches() -> dict[str, Any]:
    """`host("h1")` with an L3 cache of 11 ways per NUMA node (Intel RDT CAT)."""
    data = host("h1")
    data["cache_allocation"] = {
        "classes": 4,
        "domains": [{"id": k, "numa_nodes": [k], "ways": 11, "way_kib": 2560} for k in (0, 1)],
    }
    return data


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    opened.put_host(ComputeHostDescriptor.model_validate(host_with_caches()))
    yield opened
    opened.close()


# the first placement, and a second one that holds one unit of it again (and nothing else of it)
TWICE = {
    "pu": (config("p1/vm", [1, 2]), config("p2/vm", [2, 3])),
    "vf": (config("p1/vm", [1], vf="0000:18:02.0"), config("p2/vm", [3], vf="0000:18:02.0")),
    "cache_way": (config("p1/vm", [1], ways=2), config("p2/vm", [3], ways=1)),
}


@pytest.mark.parametrize("unit", sorted(TWICE))
def test_a_unit_committed_twice_is_refused_alike(store: Store, unit: str) -> None:
    """The second placement was decided on a snapshot that did not show the first (the host as
    reported, at its current generation): only the claim rows can refuse it, and they do, with
    the signal every double claim gives (the service retries it, then answers 409
    `nfvplace.placement.concurrent_update`)."""
    first, second = TWICE[unit]
    commit(store, "p1", [first])
    unaware = Snapshot(
        hosts={"h1": ComputeHostDescriptor.model_validate(host_with_caches())},
        generations=store.snapshot().generations,
    )
    with pytest.raises(StaleSnapshot, match=r"^a resource was claimed concurrently$"):
        commit(store, "p2", [second], unaware)
    assert store.get_placement("p2") is None
    assert store.audit() == []


def test_a_pool_taken_past_its_capacity_is_refused_alike(store: Store) -> None:
    """Hugepages are counted, not named: two placements of 3 of the 4 free 1 GiB pages of node 0,
    the second decided without the first, cannot both commit: the pool's counter refuses it."""
    commit(store, "p1", [config("p1/vm", [1], pages=3)])
    unaware = Snapshot(
        hosts={"h1": ComputeHostDescriptor.model_validate(host_with_caches())},
        generations=store.snapshot().generations,
    )
    with pytest.raises(StaleSnapshot, match=r"^h1$"):
        commit(store, "p2", [config("p2/vm", [3], pages=3)], unaware)
    assert store.get_placement("p2") is None
    commit(store, "p3", [config("p3/vm", [3], pages=1)], unaware)  # the fourth page is free
    assert store.audit() == []
