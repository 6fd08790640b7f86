"""Each host's state in a worker's index (service/host_states.py): every transition, from one map."""

from __future__ import annotations

from nfvplace.service.host_states import AVOID_S, HostState, HostStates, Pending

FRESH, STALE, PENDING, LOST, AVOIDED = (
    HostState.FRESH,
    HostState.STALE,
    HostState.PENDING,
    HostState.LOST,
    HostState.AVOIDED,
)


def test_a_host_changed_elsewhere_is_stale_from_then_until_read() -> None:
    states = HostStates()
    assert states.of("h") is FRESH
    states.changed_elsewhere("h", now=10.0)
    states.changed_elsewhere("h", now=11.0)  # stale since the first change
    assert states.of("h") is STALE
    assert states.to_read(stale_before=9.5) == set()
    assert states.to_read(stale_before=10.0) == {"h"}
    assert states.stale() == {"h"}
    states.read("h", now=12.0)
    assert states.of("h") is FRESH
    assert "h" not in states  # the map holds only hosts that are not fresh


def test_commits_in_flight_chain_and_the_latest_one_decides() -> None:
    states = HostStates()
    first, second = Pending(), Pending()
    assert states.held("h", first) is None
    assert states.held("h", second) is first  # lands after the first one
    states.finished("h", first, ok=True, now=0.0)
    assert states.of("h") is PENDING  # the second is still in flight
    states.finished("h", second, ok=True, now=0.0)
    assert states.of("h") is FRESH


def test_a_lost_race_is_read_first_then_avoided_until_avoid_s() -> None:
    states = HostStates()
    commit = Pending()
    states.held("h", commit)
    states.finished("h", commit, ok=False, now=100.0)
    assert states.of("h") is LOST
    assert states.to_read(stale_before=0.0) == {"h"}  # read before the next decision
    states.read("h", now=100.1)
    assert states.of("h") is AVOIDED
    assert states.elsewhere_first(now=100.1) == {"h"}
    assert states.elsewhere_first(now=100.0 + AVOID_S) == frozenset()  # expired: fresh
    assert states.of("h") is FRESH


def test_a_failed_read_leaves_the_host_to_read_and_not_avoided() -> None:
    states = HostStates()
    states.changed_elsewhere("h", now=1.0)
    states.unreadable("h")
    assert states.of("h") is LOST
    assert states.to_read(stale_before=0.0) == {"h"}
    states.read("h", now=2.0)
    assert states.of("h") is FRESH


def test_single_vms_go_first_where_nothing_is_stale_pending_or_avoided() -> None:
    states = HostStates()
    states.changed_elsewhere("stale", now=0.0)
    states.held("pending", Pending())
    lost = Pending()
    states.held("avoided", lost)
    states.finished("avoided", lost, ok=False, now=0.0)
    states.read("avoided", now=0.0)
    assert states.elsewhere_first(now=0.1) == {"stale", "pending", "avoided"}
