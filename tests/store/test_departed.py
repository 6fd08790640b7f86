"""The departures the Kubernetes door's pod watch records until an object of the node shows them
gone (`k8s_departed_pods`, migration 0018), on SQLite and PostgreSQL: recorded, read back by node
and bounded by `since`, ended by UID (a fingerprint matched without them) or by time (an object
without one), dropped with their node, the old ones pruned. These fail at main (no table, no
`store.departed`)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from nfvplace.store import Store
from nfvplace.store.departed import PRUNED_S, DepartedPod, DepartedPods

NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
S = timedelta(seconds=1)


@pytest.fixture
def departed(db_url: str) -> Iterator[DepartedPods]:
    opened = Store.open(db_url)
    yield DepartedPods(opened.engine)
    opened.close()


def gone(uid: str, node: str = "a", at: datetime = NOW, cpus: int = 4) -> DepartedPod:
    return DepartedPod(uid, node, f"cnf/{uid}", {"cpu": cpus, "intel.com/vf": 1}, at)


def uids(found: dict[str, list[DepartedPod]]) -> dict[str, list[str]]:
    return {node: [p.uid for p in pods] for node, pods in found.items()}


def test_departures_are_read_back_by_node_oldest_first(departed: DepartedPods) -> None:
    departed.left(gone("p1", at=NOW + S))
    departed.left(gone("p0"))
    departed.left(gone("q0", node="b"))
    found = departed.on_nodes(NOW - S)
    assert uids(found) == {"a": ["p0", "p1"], "b": ["q0"]}
    assert found["a"][0] == gone("p0")  # as recorded, its time zone kept
    assert uids(departed.on_nodes(NOW - S, ["b", "c"])) == {"b": ["q0"]}
    assert uids(departed.on_nodes(NOW, ["a"])) == {"a": ["p1"]}  # `since` bounds them
    departed.left(gone("p0", at=NOW + 2 * S, cpus=6))  # the same pod again: replaced
    assert [p.takes["cpu"] for p in departed.on_nodes(NOW - S, ["a"])["a"]] == [4, 6]


def test_an_object_ends_the_departures_it_shows(departed: DepartedPods) -> None:
    for uid in ("p0", "p1", "p2"):
        departed.left(gone(uid, at=NOW + int(uid[1]) * S))
    departed.left(gone("q0", node="b"))
    assert departed.shown("a", ["p0", "q0"]) == 1  # by UID, on its node only
    assert departed.shown("a", []) == 0
    assert departed.clear("a", NOW + S) == 1  # an object without a fingerprint: by time
    assert uids(departed.on_nodes(NOW - S)) == {"a": ["p2"], "b": ["q0"]}
    departed.drop_node("a")
    assert uids(departed.on_nodes(NOW - S)) == {"b": ["q0"]}


def test_old_departures_are_pruned_at_the_next_write(departed: DepartedPods) -> None:
    departed.left(gone("p0"))
    departed.left(gone("p1", at=NOW + (PRUNED_S + 1) * S))
    assert uids(departed.on_nodes(NOW - S)) == {"a": ["p1"]}
