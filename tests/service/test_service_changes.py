"""The change feed (store/changes.py): every write that changes a host is read after the watermark
of the read before it, on SQLite (the change counter) and PostgreSQL (transaction ids), and on
PostgreSQL a change committed after a younger one is not missed."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from service_hosts import host
from stored import commit, config

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.store import Store
from nfvplace.store.changes import stamp


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    for name in ("h1", "h2", "h3"):
        opened.put_host(chd(name))
    yield opened
    opened.close()


def chd(name: str) -> ComputeHostDescriptor:
    return ComputeHostDescriptor.model_validate(host(name))


def test_a_first_read_lists_every_host_and_then_nothing(store: Store) -> None:
    first = store.changes_since(-1)
    assert first.hosts == store.generations(["h1", "h2", "h3"])
    assert store.changes_since(first.seq).hosts == {}
    assert store.changes_since(first.seq).seq >= first.seq


WRITES: dict[str, tuple[Callable[[Store], object], str]] = {  # a write, the host it changes
    "a host reported again": (lambda s: s.put_host(chd("h2")), "h2"),
    "a host added": (lambda s: s.put_host(chd("h4")), "h4"),
    "a host deleted": (lambda s: s.delete_host("h3"), "h3"),
}


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_each_write_is_read_after_the_watermark_once(store: Store, write: str) -> None:
    before = store.changes_since(-1)
    change, changed = WRITES[write]
    change(store)
    after = store.changes_since(before.seq)
    assert after.hosts == {changed: store.generations([changed]).get(changed)}  # None: deleted
    assert store.changes_since(after.seq).hosts == {}


def test_a_placement_and_its_release_are_read(store: Store) -> None:
    seen = store.changes_since(-1)
    commit(store, "p1", [config("p1/vm", [1, 2])])
    placed = store.changes_since(seen.seq)
    assert placed.hosts == store.generations(["h1"])
    assert store.release_placement("p1")
    released = store.changes_since(placed.seq)
    assert released.hosts == store.generations(["h1"])
    assert store.changes_since(released.seq).hosts == {}


def test_a_change_committed_after_a_younger_one_is_not_missed(postgres_url: str) -> None:
    """On PostgreSQL writers stamp their transaction ids, which commit in any order: a reader that
    saw the younger change must still be told of the older one when it commits (the watermark
    stays below every transaction running when the feed was read)."""
    store = Store.open(postgres_url)
    try:
        for name in ("h1", "h2"):
            store.put_host(chd(name))
        start = store.changes_since(-1).seq
        with store.engine.begin() as older:
            stamp(older, ["h1"])  # this transaction's id is the older one: it commits last
            store.put_host(chd("h2"))  # a younger transaction, committed now
            seen = store.changes_since(start)
            assert set(seen.hosts) == {"h2"}
        after = store.changes_since(seen.seq)
        assert "h1" in after.hosts  # not missed
        # h2 may be told again (at the generation seen: a worker skips it), never after that
        assert after.hosts == store.generations(after.hosts)
        assert store.changes_since(after.seq).hosts == {}
    finally:
        store.close()
