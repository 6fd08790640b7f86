"""Indexes kept for the host lists `place` is given, so that placing again on them costs no rebuild.

Descriptors are immutable, so an index built from a list of host objects stays true for as long as
the list holds those same objects. An index is found again by the identity of every object, in
order (never by equality or by id alone: an entry holds weak references, and a host that is garbage
collected drops its entries). A list that differs from a known one in a few hosts having the same id
(`[result.hosts.get(h.id, h) for h in hosts]`) gets a copy of that index with those hosts updated,
which places exactly as a fresh index would. A handful of lists are kept, the least recently used
dropped first.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence

from ...models.chd import ComputeHostDescriptor
from .fleet import FleetIndex

KEEP = 4
"""Host lists whose index is kept."""

NEAR = 64
"""At most this many changed hosts turn a known index into a new one (more: build afresh)."""

Key = tuple[int, ...]


class _Entry:
    __slots__ = ("index", "refs")

    def __init__(self, refs: list[weakref.ref[ComputeHostDescriptor]], index: FleetIndex) -> None:
        self.refs = refs
        self.index = index


_entries: OrderedDict[Key, _Entry] = OrderedDict()
_dead: list[Key] = []  # keys of entries one of whose hosts was collected (appended by weakrefs)
_lock = threading.Lock()


def _same_objects(entry: _Entry, hosts: Sequence[ComputeHostDescriptor]) -> bool:
    return all(ref() is host for ref, host in zip(entry.refs, hosts, strict=True))


def _changed(entry: _Entry, hosts: Sequence[ComputeHostDescriptor]) -> list[int] | None:
    """Positions where `hosts` has another object for the same host id (None: not close enough)."""
    if len(entry.refs) != len(hosts):
        return None
    changed: list[int] = []
    ids = entry.index.host_ids
    for k, (ref, host) in enumerate(zip(entry.refs, hosts, strict=True)):
        if ref() is not host:
            if host.id != ids[k] or len(changed) == NEAR:
                return None
            changed.append(k)
    return changed


def _purge() -> None:
    """Drop the entries whose hosts were collected (called with the lock held)."""
    while _dead:
        key = _dead.pop()
        entry = _entries.get(key)
        if entry is not None and any(ref() is None for ref in entry.refs):
            del _entries[key]


def _remember(key: Key, hosts: Sequence[ComputeHostDescriptor], index: FleetIndex) -> None:
    def collected(_: object) -> None:  # may run inside any allocation: only append
        _dead.append(key)

    entry = _Entry([weakref.ref(h, collected) for h in hosts], index)
    with _lock:
        _purge()
        _entries[key] = entry
        while len(_entries) > KEEP:
            _entries.popitem(last=False)


def index_for(
    hosts: Sequence[ComputeHostDescriptor], share: bool = True, lazy: bool = False
) -> FleetIndex:
    """The index of exactly these host objects, built at most once while they live (`share`,
    `lazy`: see `FleetIndex`; an index found again is as it was built).

    Callers must not change the index they get (placing on it does not: claims are returned as
    new descriptors); `FleetIndex(hosts)` gives a private one.
    """
    key = tuple(map(id, hosts))
    with _lock:
        _purge()
        entry = _entries.get(key)
        if entry is not None and _same_objects(entry, hosts):
            _entries.move_to_end(key)
            return entry.index
        candidates = list(reversed(_entries.values()))
    index = None
    for candidate in candidates:
        changed = _changed(candidate, hosts)
        if changed is not None:
            index = candidate.index.copy()
            index.update_many(hosts[k] for k in changed)
            break
    if index is None:
        index = FleetIndex(hosts, share=share, lazy=lazy)
    _remember(key, hosts, index)
    return index


def clear() -> None:
    """Forget every kept index."""
    with _lock:
        _entries.clear()


__all__ = ["KEEP", "NEAR", "clear", "index_for"]
