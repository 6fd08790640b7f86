"""`AssumedPod.ended`: when a pod the node's counts do not show stops being counted.

A running pod ends on the timer only on a node a pod left at or after the generation it was
decided on (the departure may hide its arrival from the totals), once the node's counts were
reconciled at a newer generation; without such a departure only its node's totals (or its
expiry) end it, however late the object that shows it comes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from nfvplace.store.assumed_rows import ACCOUNTED_KEPT_S, AssumedPod, Reading

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
        ("not seen running", None, (9, 9), False),
        ("running, interval not over", 1 * S, (9, 9), False),
        ("no view of the node", -1 * S, None, False),
        ("no pod ever left the node", -1 * S, (9, None), False),
        ("a pod left before its generation", -1 * S, (9, 4), False),
        ("a pod left, node not read again", -1 * S, (5, 5), False),
        ("a pod left at its generation, read again", -1 * S, (6, 5), True),
        ("a pod left later, read again", -1 * S, (9, 7), True),
    ],
)
def test_a_running_pod_ends_on_the_timer_only_after_a_departure(
    case: str, running: timedelta | None, view: Reading | None, ended: bool
) -> None:
    views = {} if view is None else {"node": view}
    assert pod(running).ended(NOW, views) is ended, case


def test_expiry_and_accounting_end_a_pod_whatever_the_node() -> None:
    expired = AssumedPod("u", "ns/p", "node", {}, NOW - 10 * S, NOW, 5)
    assert expired.ended(NOW, {})
    assert not pod(None, accounted=-1 * S).ended(NOW, {})
    assert pod(None, accounted=-ACCOUNTED_KEPT_S * S).ended(NOW, {})
