"""The state of each host in a worker's index (see `live`'s docstring), and its transitions: every
change of a host's state is one method of `HostStates`."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum

AVOID_S = 0.5  # a worker that lost a race on a host places elsewhere first for this long


class HostState(Enum):
    """What a worker's index knows of a host against the database (see `live`'s docstring)."""

    FRESH = "fresh"  # the index has what the database has, or will once this worker's commits land
    STALE = "stale"  # another writer changed it: read lazily, at the latest `live.STALE_S` after
    PENDING = "pending"  # a commit of this worker on it is in flight
    LOST = "lost"  # this worker's commit on it lost its race (or a read failed): read it first
    AVOIDED = "avoided"  # read again after a lost race: single VMs go elsewhere first a while


@dataclass(eq=False)
class Pending:
    """A commit this worker decided and has not finished yet."""

    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False


@dataclass(slots=True)
class _Mark:
    """A host's state other than fresh: since when (stale), until when (lost, avoided), and
    the latest commit in flight (pending)."""

    state: HostState
    at: float = 0.0
    commit: Pending | None = None


class HostStates(dict[str, _Mark]):
    """Every host that is not fresh, and the transitions between the states."""

    def of(self, host_id: str) -> HostState:
        mark = self.get(host_id)
        return HostState.FRESH if mark is None else mark.state

    def changed_elsewhere(self, host_id: str, now: float) -> None:
        """The change feed names `host_id` (not pending here): stale since now, if not already."""
        if self.of(host_id) is not HostState.STALE:
            self[host_id] = _Mark(HostState.STALE, now)

    def read(self, host_id: str, now: float) -> None:
        """`host_id` was read: fresh, or avoided while its lost race is recent."""
        mark = self.pop(host_id, None)
        if mark is not None and mark.state is HostState.LOST and mark.at > now:
            self[host_id] = _Mark(HostState.AVOIDED, mark.at)

    def unreadable(self, host_id: str) -> None:
        """A read of `host_id` failed part way: read it before the next decision."""
        self[host_id] = _Mark(HostState.LOST, 0.0)

    def held(self, host_id: str, commit: Pending) -> Pending | None:
        """A commit of this worker on `host_id` is in flight; the one it lands after, if any."""
        mark = self.get(host_id)
        earlier = mark.commit if mark is not None and mark.state is HostState.PENDING else None
        self[host_id] = _Mark(HostState.PENDING, commit=commit)
        return earlier

    def finished(self, host_id: str, commit: Pending, ok: bool, now: float) -> None:
        """`commit` on `host_id` ended. The host's latest commit decides what it is now: fresh
        (landed), or lost (read it again; avoided for `AVOID_S`); a later commit still in flight
        keeps it pending (it fails too if this one failed: it lands after this one)."""
        mark = self.get(host_id)
        if mark is None or mark.commit is not commit:
            return
        if ok:
            del self[host_id]
        else:
            self[host_id] = _Mark(HostState.LOST, now + AVOID_S)

    def to_read(self, stale_before: float) -> set[str]:
        """The hosts to read before deciding: lost ones, and ones stale since `stale_before`."""
        return {
            h
            for h, m in self.items()
            if m.state is HostState.LOST or (m.state is HostState.STALE and m.at <= stale_before)
        }

    def elsewhere_first(self, now: float) -> frozenset[str]:
        """The hosts a single VM goes to only if no other fits (the avoided ones that expired
        become fresh)."""
        for host_id in [h for h, m in self.items() if m.state is HostState.AVOIDED and m.at <= now]:
            del self[host_id]
        return frozenset(self)

    def stale(self) -> set[str]:
        return {h for h, m in self.items() if m.state is HostState.STALE}
