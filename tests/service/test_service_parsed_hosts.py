"""`ParsedHosts`: the extender's nodes kept parsed while unchanged, on a real store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from service_hosts import host

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.store import Store
from nfvplace.store.parsed import ParsedHosts


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url, migrate=True)
    yield opened
    opened.close()


def _put(store: Store, host_id: str, pages: int = 4) -> None:
    store.put_host(ComputeHostDescriptor.model_validate(host(host_id, pages_1g=pages)))


def test_an_unchanged_host_comes_back_as_the_same_object(store: Store) -> None:
    for name in ("a", "b"):
        _put(store, name)
    hosts = ParsedHosts(store)
    first = hosts.read(["a", "b", "gone"])
    assert sorted(first) == ["a", "b"]  # a host the store does not have is not there
    again = hosts.read(["b", "a"])
    assert all(again[h][1] is first[h][1] for h in ("a", "b"))  # the engine finds its index


def test_a_changed_host_is_read_again_and_a_deleted_one_is_gone(store: Store) -> None:
    for name in ("a", "b"):
        _put(store, name)
    hosts = ParsedHosts(store)
    before = hosts.read(["a", "b"])
    _put(store, "a", pages=2)
    store.delete_host("b")
    after = hosts.read(["a", "b"])
    assert list(after) == ["a"]
    generation, chd = after["a"]
    assert generation > before["a"][0]
    assert chd.numa_nodes[0].memory.hugepages[0].total == 2
    assert after == ParsedHosts(store).read(["a", "b"])  # what a fresh reader parses


def test_at_most_limit_hosts_are_kept(store: Store) -> None:
    for name in ("a", "b", "c"):
        _put(store, name)
    hosts = ParsedHosts(store, limit=2)
    first = hosts.read(["a"])
    hosts.read(["b", "c"])  # a, read least recently, is dropped
    assert hosts.read(["a"])["a"][1] is not first["a"][1]
    assert hosts.read(["c"])["c"][1] is hosts.read(["c"])["c"][1]
