"""The readers an index tells before it rewrites a row: held weakly, told in order, forgotten when
they say so or are gone."""

from __future__ import annotations

import copy
import gc
import pickle
from collections.abc import Callable

import pytest

from bench.hostgen import make_fleet
from nfvplace.placement import FleetIndex
from nfvplace.placement.index import watchers
from nfvplace.placement.index.watchers import Watchers


class Reader:
    def __init__(self, rows_wanted: int) -> None:
        self.told: list[tuple[object, int]] = []
        self.left = rows_wanted  # after this many rows it has nothing left to pin

    def pin(self, index: object, row: int) -> bool:
        self.told.append((index, row))
        self.left -= 1
        return self.left > 0


def test_readers_are_told_each_row_and_forgotten_when_done() -> None:
    index = object()
    box = Watchers()
    once, twice = Reader(1), Reader(2)
    box.add(once)
    box.add(twice)
    box.changing(index, 3)
    box.changing(index, 5)
    box.changing(index, 7)
    assert once.told == [(index, 3)]
    assert twice.told == [(index, 3), (index, 5)]
    assert len(box) == 0


def test_a_reader_nobody_keeps_is_not_told() -> None:
    box = Watchers()
    box.add(Reader(9))  # dropped at once
    box.changing(object(), 1)
    assert len(box) == 0


def test_dead_readers_are_dropped_on_registration_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """A door that reads its diagnoses at once and never writes (a scheduler's evaluations) must
    not pile up dead references."""
    monkeypatch.setattr(watchers, "PRUNE_FROM", 8)
    box = Watchers()
    kept = [Reader(9) for _ in range(3)]
    for reader in kept:
        box.add(reader)
    for _ in range(1000):
        box.add(Reader(9))
    gc.collect()
    assert len(box) < 8 + 2 * len(kept)


@pytest.mark.parametrize(
    ("change", "rows"),
    [
        ("claimed", [2]),  # a placement's claim or a release
        ("update", [4]),  # a host's new descriptor
        ("copy", []),  # a copy's writes are its own
        ("add", []),  # a new host: no row rewritten (the index is rebuilt, new arrays)
    ],
)
def test_the_index_tells_before_it_rewrites(change: str, rows: list[int]) -> None:
    hosts = make_fleet(6, seed=2)
    index = FleetIndex(hosts)
    seen: list[tuple[int, str]] = []

    class Spy:
        def pin(self, at: object, row: int) -> bool:
            assert at is index
            seen.append((row, str(index.hosts[row].model_dump_json())))
            return True

    spy = Spy()
    index.watchers.add(spy)
    before = {i: str(h.model_dump_json()) for i, h in enumerate(index.hosts)}
    changed = hosts[rows[0]].model_copy(update={"instances": ()}) if rows else None
    if change == "claimed":
        index.claimed([changed])
    elif change == "update":
        index.update(changed)
    elif change == "copy":
        index.copy().update(hosts[1].model_copy(update={"instances": ()}))
    else:
        index.update(make_fleet(7, seed=2)[6].model_copy(update={"id": "new"}))
    assert seen == [(row, before[row]) for row in rows]  # told before, with the host as it was


@pytest.mark.parametrize("clone", [lambda i: pickle.loads(pickle.dumps(i)), copy.deepcopy])
def test_a_pickled_or_copied_index_keeps_no_reader(
    clone: Callable[[FleetIndex], FleetIndex],
) -> None:
    """An index with a kept result's reader pickles (a notebook's multiprocessing) and deep-copies
    as it did: the clone is another index, read by no result."""
    index = FleetIndex(make_fleet(4, seed=3))
    reader = Reader(9)
    index.watchers.add(reader)
    other = clone(index)
    assert len(other.watchers) == 0
    other.claimed([other.hosts[1]])
    assert reader.told == []
    assert len(index.watchers) == 1
