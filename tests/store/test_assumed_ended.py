"""When a pod its node's counts do not show stops being counted (`AssumedPod.ended`), and an
object whose pod fingerprint tells which assumed pods it shows (`AssumedPods.reconcile`).

A running pod ends on the timer only where its node's last object did not tell which pods it
shows (no fingerprint, or none that matched the pods known there); where it did, only an object
that names it ends it, however late that comes: a newer object alone may have been read before
the kubelet admitted the pod. These fail at main (no `Reading` of a node, no `shows`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from nfvplace.store import Store
from nfvplace.store.assumed import AssumedPods, Shows
from nfvplace.store.assumed_rows import ACCOUNTED_KEPT_S, VIEWS, AssumedPod, Reading, readings
from nfvplace.store.records import utc_now

NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
S = timedelta(seconds=1)


def pod(running: timedelta | None, accounted: timedelta | None = None) -> AssumedPod:
    """Decided on generation 5, expiring in 300 s; running until NOW + `running`."""
    return AssumedPod(
        "uid",
        "ns/p",
        "node",
        {"cpu": {0: 4}},
        NOW - 10 * S,
        NOW + 300 * S,
        5,
        None if running is None else NOW + running,
        None if accounted is None else NOW + accounted,
    )


@pytest.mark.parametrize(
    ("case", "running", "view", "ended"),
    [
        ("not seen running", None, (9, False), False),
        ("running, interval not over", 1 * S, (9, False), False),
        ("no view of the node", -1 * S, None, True),
        ("unsigned, node not read again", -1 * S, (5, False), False),
        ("unsigned, read again", -1 * S, (6, False), True),
        ("signed, read again: only an object naming it ends it", -1 * S, (6, True), False),
        ("signed, read much later", -1 * S, (99, True), False),
    ],
)
def test_a_running_pod_ends_on_the_timer_only_where_objects_do_not_name_pods(
    case: str, running: timedelta | None, view: Reading | None, ended: bool
) -> None:
    views = {} if view is None else {"node": view}
    assert pod(running).ended(NOW, views) is ended, case


def test_expiry_and_accounting_end_a_pod_whatever_the_node() -> None:
    expired = AssumedPod("u", "ns/p", "node", {}, NOW - 10 * S, NOW, 5)
    assert expired.ended(NOW, {"node": (9, True)})
    assert not pod(None, accounted=-1 * S).ended(NOW, {})
    assert pod(None, accounted=-ACCOUNTED_KEPT_S * S).ended(NOW, {})


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    yield opened
    opened.close()


def assume(pods: AssumedPods, uid: str, cpus: int, now: datetime) -> None:
    """Decided on generation 1, whose free totals were 32 CPUs."""
    taken = AssumedPod(uid, f"ns/{uid}", "node", {"cpu": {0: cpus}}, now, now + 300 * S, 1)
    pods.assume("node", now, lambda known, through: (None, taken, (1, {"cpu": 32})))


def live(pods: AssumedPods, now: datetime) -> list[str]:
    return [p.uid for p in pods.live(now, ["node"])]


def test_a_signed_object_accounts_the_pods_it_names_and_stops_the_timer(store: Store) -> None:
    """p1 and p2 (4 CPUs each) assumed; an object whose fingerprint names p1 alone comes (its
    totals showing p1 and p2 would make no difference): p1 is accounted, p2 counts on past its
    timer, until an object names it."""
    pods, now = AssumedPods(store.engine), utc_now()
    asked: list[list[str]] = []

    def names(which: set[str]) -> Shows:
        def shows(signed: str, pending: list[AssumedPod]) -> list[str] | None:
            asked.append([p.uid for p in pending])
            return [p.uid for p in pending if p.uid in which]

        return Shows("pfp0v001", shows)

    assert pods.reconcile("node", 1, {"cpu": 32}, now, names(set())) == []
    assert asked == [[]]  # asked with none assumed: its matcher learns what departures are over
    asked.clear()
    assume(pods, "p1", 4, now)
    assume(pods, "p2", 4, now)

    assert pods.reconcile("node", 2, {"cpu": 24}, now, names({"p1"})) == ["p1"]
    assert asked == [["p1", "p2"]]
    assert pods.admitted("p2", now - S)  # running, its interval over
    assert live(pods, now) == ["p2"]  # the object told: no timer
    assert pods.reconcile("node", 3, {"cpu": 24}, now, names({"p2"})) == ["p2"]
    assert live(pods, now) == []


def test_an_object_that_matches_nothing_leaves_the_totals_and_the_timer(store: Store) -> None:
    pods, now = AssumedPods(store.engine), utc_now()
    assume(pods, "p1", 4, now)
    assume(pods, "p2", 4, now)
    nothing = Shows("pfp0v001", lambda signed, pending: None)
    assert pods.reconcile("node", 2, {"cpu": 28}, now, nothing) == ["p1"]
    assert pods.admitted("p2", now - S)
    assert live(pods, now) == []  # unsigned: the timer ended p2 (the older rule)


def matching(which: set[str] | None, asked: list[str]) -> Shows:
    """An object whose fingerprint is `pfp0v001-N` (N: len(asked) when made) that names the
    assumed pods `which` (None: matches no set); each fingerprint matched is put in `asked`."""
    signed = f"pfp0v001-{len(asked)}"

    def match(printed: str, pending: list[AssumedPod]) -> list[str] | None:
        asked.append(printed)
        return None if which is None else [p.uid for p in pending if p.uid in which]

    return Shows(signed, match)


def test_an_object_that_matched_no_set_is_kept_until_it_matches(store: Store) -> None:
    """p0 (shown) left as p1 arrived: the totals do not move. The pod watch had not seen p0
    leave when the object naming p1 was read: no set matched. It is kept with the node's
    baseline, and matched again when the pod watch records more (`rematch`): p1 is accounted,
    the node signed, its baseline the object's free totals. Fails at k8s-gap2r (nothing kept,
    no `rematch`)."""
    pods, now, asked = AssumedPods(store.engine), utc_now(), []
    assume(pods, "p1", 4, now)
    assert pods.reconcile("node", 2, {"cpu": 32}, now, matching(None, asked)) == []
    assert live(pods, now) == ["p1"]
    assert pods.unmatched() == ["node"]
    assert pods.unmatched(["other"]) == []
    assert pods.rematch("node", now, matching(None, asked).match) is None  # still no set
    assert pods.unmatched() == ["node"]
    assert pods.rematch("node", now, matching({"p1"}, asked).match) == ["p1"]
    assert asked == ["pfp0v001-0", "pfp0v001-0", "pfp0v001-0"]  # the object kept, each time
    assert live(pods, now) == []
    assert pods.unmatched() == []
    with store.engine.connect() as conn:
        assert readings(conn) == {"node": (2, True)}
        assert conn.execute(select(VIEWS.c.free)).scalar_one() == {"cpu": 32}
    assert pods.rematch("node", now, matching({"p1"}, asked).match) is None  # nothing kept


def test_a_newer_object_replaces_the_one_kept(store: Store) -> None:
    pods, now, asked = AssumedPods(store.engine), utc_now(), []
    assume(pods, "p1", 4, now)
    assert pods.reconcile("node", 2, {"cpu": 32}, now, matching(None, asked)) == []
    assert pods.reconcile("node", 3, {"cpu": 32}, now, matching(None, asked)) == []
    assert pods.rematch("node", now, matching({"p1"}, asked).match) == ["p1"]
    assert asked == ["pfp0v001-0", "pfp0v001-1", "pfp0v001-1"]  # gen 3's, not gen 2's
    assume(pods, "p2", 4, now)
    assert pods.reconcile("node", 4, {"cpu": 32}, now, matching(None, asked)) == []
    assert pods.reconcile("node", 5, {"cpu": 28}, now) == ["p2"]  # no fingerprint: totals
    assert pods.unmatched() == []
    assert pods.rematch("node", now, matching({"p2"}, asked).match) is None
