"""The CHD of each candidate host, kept by what the scheduler holds of the host.

A scheduler asks about the same thousand hosts at every request, and between two requests one or
two of them changed. Writing a host's CHD and its digest costs about as much as Nova's own NUMA
filter on it, so the plug-in keeps them per host by its `host_inputs` (every value `host_view`
reads of the HostState: NUMA cells, PCI pools, allocation ratios, CPU info) and the request's
reach (host-wide or per cell, pinned `isolate` or not): equal inputs give the same CHD, so a kept
one is never stale, and a host whose inputs changed is written again. Standard library only.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .canonical import canonical
from .hosts import chd_of, isolate_refused, view_of
from .reach import host_wide

KEPT_HOSTS = 2048  # Nova's max_placement_results (1,000 by default), twice


@dataclass(frozen=True, slots=True)
class SentHost:
    """One host's CHD as the client sends it (`id`, digest, canonical JSON), and why nova-compute
    would not pin this request's vCPUs on some of its cells (None: it would on all)."""

    id: str
    ref: str
    text: bytes
    closed: str | None


class SentHosts:
    """CHDs by (host inputs, host-wide, isolate), the least recently used forgotten first."""

    def __init__(self, size: int = KEPT_HOSTS) -> None:
        self.size = size
        self.kept: OrderedDict[tuple[Any, ...], SentHost] = OrderedDict()
        self.lock = threading.Lock()

    def of_inputs(self, inputs: tuple[Any, ...], wide: bool, isolate: bool) -> SentHost:
        """The CHD of a host by its `host_inputs`."""
        try:
            key: tuple[Any, ...] | None = (inputs, wide, isolate)
            hash(key)
        except TypeError:  # a value Nova never gives (an unhashable pool field): not kept
            key = None
        if key is not None:
            with self.lock:
                found = self.kept.get(key)
                if found is not None:
                    self.kept.move_to_end(key)
                    return found
        sent = _written(view_of(inputs), wide, isolate)
        if key is not None:
            with self.lock:
                self.kept[key] = sent
                while len(self.kept) > self.size:
                    self.kept.popitem(last=False)
        return sent


FROZEN_AT_IMPORT = gc.get_freeze_count()  # the interpreter's own, before the scheduler's


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Cyclic garbage collection paused while a pass writes its hosts' CHDs and reads the answers
    (the service's `models.loading.gc_paused`, which this standard-library plug-in cannot import).
    A cold pass builds a thousand hosts' views, columns and texts, hundreds of thousands of small
    objects with no cycles, in a scheduler holding many objects: a full collection set off midway
    cost as much as writing the views. Left as it was when something else paused it.

    What the pass keeps (each host's inputs and text, for the next pass) then goes to the oldest
    generation unwalked (`freeze` then `unfreeze`): resumed as it was, the next young collection
    walked it all for nothing (17-25 ms at 1,000 hosts), and a middle one again later. Full
    collections still walk it. Not where the scheduler froze objects since this module was
    imported: `unfreeze` would hand those back (what the interpreter froze as it started, a few
    hundred constant tuples, it does hand back)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() <= FROZEN_AT_IMPORT:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _written(view: dict[str, Any], wide: bool, isolate: bool) -> SentHost:
    if wide:  # a shared guest with no NUMA topology: the whole host
        view = host_wide(view)
    closed = isolate_refused(view) if isolate else {}
    chd = chd_of(view, closed, columns=True)
    text = canonical(chd)  # `digest`'s text, the layout's columns written once
    return SentHost(
        chd["id"],
        hashlib.sha256(text).hexdigest(),
        text,
        closed_reason(view, closed) if closed else None,
    )


BUG_1889633 = (
    "nova-compute refuses hw:cpu_thread_policy=isolate on SMT cell(s) {cells} configured with "
    "cpu_dedicated_set (Nova bug #1889633: its claim would fail and Nova reschedule); to take "
    "isolate VMs there, leave each dedicated core's sibling threads out of cpu_dedicated_set and "
    "cpu_shared_set (Nova then takes each dedicated thread as a whole core), or turn SMT off"
)


def closed_reason(view: dict[str, Any], closed: dict[int, list[int]]) -> str:
    """Why nova-compute would not pin an isolate request on these cells' CPUs."""
    legacy = {int(c["id"]) for c in view["cells"] if set(c["cpuset"]) == set(c["pcpuset"])}
    smt = [str(cell) for cell in closed if cell not in legacy]
    if smt:
        return BUG_1889633.format(cells=", ".join(smt))
    pus = ", ".join(str(pu) for cell in closed.values() for pu in cell)
    return (
        "nova-compute takes for isolate only cores with all their threads in vcpu_pin_set: "
        f"not CPUs {pus}"
    )
