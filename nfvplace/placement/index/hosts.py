"""How the fleet index keeps the hosts' descriptors: shared sub-models, and compressed when large."""

from __future__ import annotations

import pickle
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import TypeVar

from ...models.chd import ComputeHostDescriptor, Port

_M = TypeVar("_M")

HOT = 32
"""Hosts a compact store keeps as objects (and views of, `FleetIndex.free`). A decompressed host
holds about 85 KiB of objects (its parts are not shared with other hosts'): over 300 placements a
worker's index of 10,000 hosts grew from 40 MiB to 53 with 512 of them, to 48 with 64, to 44 with
16. A placement reads one or two hosts, and packing comes back to the same few."""


class Interner:
    """Shares equal sub-models between hosts (models are immutable, so equal parts can be one object).

    A fleet's hosts come from a handful of machine models: the PUs, ports and VFs of one host are, as
    values, those of many others. Keeping one object per distinct value instead of one per host
    halves the memory of a large fleet; the interned host is equal (`==`) to the one given.
    """

    def __init__(self) -> None:
        self._table: dict[object, object] = {}

    @staticmethod
    def _key(model: object) -> tuple[object, ...]:
        # the class and the field values, as a plain tuple: hashed and compared in C, where the
        # models' own __eq__ runs in Python (a 10,000-host fleet interns about 750,000 PUs)
        return (type(model), *model.__dict__.values())

    def _one(self, model: _M) -> _M:
        return self._table.setdefault(self._key(model), model)  # type: ignore[return-value]

    def _port(self, port: Port) -> Port:
        key = self._key(port)
        known = self._table.get(key)
        if known is not None:
            return known  # type: ignore[return-value]
        shared = port.model_copy(update={"vfs": tuple(self._one(vf) for vf in port.vfs)})
        self._table[key] = shared
        return shared

    def host(self, host: ComputeHostDescriptor) -> ComputeHostDescriptor:
        nodes = []
        for node in host.numa_nodes:
            nics = tuple(
                nic.model_copy(update={"ports": tuple(self._port(p) for p in nic.ports)})
                for nic in node.nics
            )
            cpus = tuple(self._one(cpu) for cpu in node.cpus)
            nodes.append(node.model_copy(update={"cpus": cpus, "nics": nics}))
        return host.model_copy(
            update={"numa_nodes": tuple(nodes), "processor": self._one(host.processor)}
        )


class HostStore:
    """The fleet's descriptors, as given, or (compact) pickled and compressed.

    A compact store keeps the `HOT` most recently used hosts as objects and the rest as compressed
    bytes (2-5 KiB a host instead of 50-400 KiB of model objects); a host is decompressed when the
    solver or a message needs it and compressed again only when it leaves the hot set changed.
    """

    def __init__(
        self, hosts: Iterable[ComputeHostDescriptor], compact: bool, hot: int | None = None
    ):
        self.compact = compact
        self.hot_size = HOT if hot is None else hot
        self._hot: OrderedDict[int, tuple[ComputeHostDescriptor, bool]] = OrderedDict()
        self._items: list[ComputeHostDescriptor | bytes | None] = []
        for host in hosts:
            self._items.append(self._pack(host) if compact else host)

    @staticmethod
    def _pack(host: ComputeHostDescriptor) -> bytes:
        return zlib.compress(pickle.dumps(host, protocol=pickle.HIGHEST_PROTOCOL), 1)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: int) -> ComputeHostDescriptor:
        item = self._items[i]
        if isinstance(item, ComputeHostDescriptor):
            return item
        cached = self._hot.get(i)
        if cached is not None:
            self._hot.move_to_end(i)
            return cached[0]
        assert isinstance(item, bytes)
        host: ComputeHostDescriptor = pickle.loads(zlib.decompress(item))
        self._remember(i, host, dirty=False)
        return host

    def __setitem__(self, i: int, host: ComputeHostDescriptor) -> None:
        if not self.compact:
            self._items[i] = host
            return
        self._items[i] = None  # the hot copy is the truth until it is compressed again
        self._hot.pop(i, None)
        self._remember(i, host, dirty=True)

    def _remember(self, i: int, host: ComputeHostDescriptor, dirty: bool) -> None:
        self._hot[i] = (host, dirty)
        while len(self._hot) > self.hot_size:
            j, (old, changed) = self._hot.popitem(last=False)
            if changed:
                self._items[j] = self._pack(old)

    def append(self, host: ComputeHostDescriptor) -> None:
        self._items.append(self._pack(host) if self.compact else host)

    def __iter__(self) -> Iterator[ComputeHostDescriptor]:
        for i in range(len(self._items)):
            yield self[i]

    def copy(self) -> HostStore:
        clone = HostStore((), self.compact, self.hot_size)
        clone._items = list(self._items)
        clone._hot = OrderedDict(self._hot)
        return clone
