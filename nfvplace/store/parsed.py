"""Hosts' availability kept parsed by generation, for readers that ask for the same hosts again
and again (the Kubernetes extender: every filter and prioritize call names the cluster's nodes).

`read(ids)` asks the store only for the generations, and parses again just the hosts that changed
since they were kept: a hundred unchanged nodes cost one small query instead of a hundred
documents parsed. The same descriptor objects come back while a host is unchanged, so that the
engine finds its index of them again (`nfvplace.placement` keeps an index by the identity of the
host objects it is given). At most `limit` hosts are kept, the least recently read dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

from sqlalchemy import Connection

from ..models.chd import ComputeHostDescriptor
from .repository import Store

Kept = tuple[int, ComputeHostDescriptor]


class ParsedHosts:
    def __init__(self, store: Store, limit: int = 10_000) -> None:
        self.store = store
        self.limit = limit
        self._kept: OrderedDict[str, Kept] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, host_ids: Iterable[str], through: Connection | None = None) -> dict[str, Kept]:
        """Generation and availability of each host of `host_ids` that exists (read through the
        connection `through`, when given)."""
        wanted = self.store.generations(host_ids, through)
        with self._lock:
            found = {h: self._kept[h] for h in wanted if self._kept.get(h, (None,))[0] == wanted[h]}
        changed = [h for h in wanted if h not in found]
        if changed:  # read as they are now (a host may have changed again since `generations`)
            read = self.store.iter_availability(changed, through)
            found.update((h, (g, chd)) for h, g, chd in read)
        with self._lock:
            for host_id, kept in found.items():
                if self._kept.get(host_id, kept)[0] > kept[0]:
                    continue  # another reader kept a newer one meanwhile
                self._kept[host_id] = kept
                self._kept.move_to_end(host_id)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)
        return found
