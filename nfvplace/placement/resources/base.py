"""The shapes every resource kind and every stage of the pipeline share.

- `Vocabulary`: the column vocabularies of the fleet index (page sizes, port speeds, CPU flags,
  names), gathered from the hosts by the kinds that need them;
- `Table`: a kind's columns in the fleet index (numpy arrays, hosts x NUMA node slots);
- `HostFree`: one host's free resources as placement counts them, one part per kind (`node_parts`:
  a new version of a host keeps the parts of the nodes it did not change);
- `IndexedFleet`: what the kinds read of the fleet index (the index implements it; the kinds never import
  the index, which is built on top of them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import is_
from typing import Any, Protocol, Self, cast

import numpy as np
import numpy.typing as npt

from ...models.chd import ComputeHostDescriptor, NumaNode
from ...models.configuration import VmConfiguration

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

UNLIMITED_KBPS = 2**62  # bandwidth of a node, port or host that states no figure
EPS = 1e-9


class Vocabulary:
    """The terms that name index columns, by namespace: ordered values (`page_sizes`, `speeds`: a
    column per value, ascending) and codes (`flags`, `names`: an integer per term, by sorted term)."""

    def __init__(self, terms: Mapping[str, Iterable[Hashable]]) -> None:
        self._values: dict[str, tuple[Any, ...]] = {
            ns: tuple(sorted(values))
            for ns, values in terms.items()  # type: ignore[type-var, unused-ignore]
        }
        self._codes: dict[str, dict[Any, int]] = {
            ns: {term: k for k, term in enumerate(values)} for ns, values in self._values.items()
        }

    def values(self, namespace: str) -> tuple[Any, ...]:
        return self._values.get(namespace, ())

    def column(self, namespace: str, term: Hashable) -> int | None:
        """The column (or code) of `term`, None when no host has it."""
        return self._codes.get(namespace, {}).get(term)

    def covers(self, namespace: str, term: Hashable) -> bool:
        return term in self._codes.get(namespace, {})

    def code(self, name: str | None) -> int:
        """The code of a name (vendor, model, hypervisor or vSwitch type, memory type): -1 for
        None, -2 for a name no host has."""
        if name is None:
            return -1
        found = self._codes.get("names", {}).get(name.lower())
        return -2 if found is None else found


def by_class(hosts: int, nodes: int, classes: int) -> IntArray:
    """Zeros, hosts x node slots x classes (port speeds, page sizes), laid out class by class: the
    filter reads one class of every host and node (`table[:, :, k]`), which is then one contiguous
    block instead of every k-th number of the whole table (a third of the time per comparison)."""
    return np.zeros((classes, hosts, nodes), dtype=np.int64).transpose(1, 2, 0)


class Table:
    """A kind's columns in the fleet index: a dataclass of numpy arrays (hosts first) and of
    per-host mappings. `copy` gives an independent copy (arrays and mappings copied)."""

    def copy(self) -> Self:
        changes: dict[str, Any] = {}
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if isinstance(value, np.ndarray):
                changes[field.name] = value.copy(order="K")  # keeps `by_class` layouts
            elif isinstance(value, dict):
                changes[field.name] = {
                    k: v.copy() if isinstance(v, dict | set) else v for k, v in value.items()
                }
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


@dataclass(frozen=True, slots=True)
class NoTable(Table):
    """The columns of a kind that keeps none."""


class TableKey[T: Table](Protocol):
    """What names a kind's columns in the fleet index (the stage is `kind.Columns`)."""

    @property
    def name(self) -> str: ...
    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> T: ...


class FreeKey[F](Protocol):
    """What names a kind's part of a host's free resources (the stage is `kind.Free`)."""

    @property
    def name(self) -> str: ...
    def free(self, host: ComputeHostDescriptor) -> F: ...


@dataclass(frozen=True, slots=True)
class HostFree:
    """One host's free resources, classified the way placement counts them: a part per resource
    kind (`of(kind)`), each holding its per-node figures by node position (`slots`)."""

    id: str
    node_ids: tuple[int, ...]  # NUMA node id of each slot, in the host's order
    parts: Mapping[str, object]
    _memo: dict[Hashable, Any] | None = dataclasses.field(
        default=None, init=False, compare=False, repr=False
    )

    def of[F](self, kind: FreeKey[F]) -> F:
        return cast(F, self.parts[kind.name])

    def memo(self) -> dict[Hashable, Any]:
        """What is worked out of these free resources alone (a policy's node shares), kept with
        them: the index reads a host's view again for each placement until a claim changes it."""
        if self._memo is None:
            object.__setattr__(self, "_memo", {})
        return cast(dict[Hashable, Any], self._memo)

    def slot(self, node_id: int) -> int:
        return self.node_ids.index(node_id)


class HostSequence(Protocol):
    """The fleet's descriptors by host index (a list, or the index's compressed store)."""

    def __getitem__(self, i: int, /) -> ComputeHostDescriptor: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[ComputeHostDescriptor]: ...


class IndexedFleet(Protocol):
    """What the kinds read of the fleet index."""

    @property
    def hosts(self) -> HostSequence: ...
    @property
    def host_ids(self) -> list[str]: ...
    @property
    def node_id(self) -> IntArray: ...  # hosts x slots: the NUMA node id, -1 for no node
    @property
    def max_nodes(self) -> int: ...
    @property
    def vocab(self) -> Vocabulary: ...
    def table[T: Table](self, kind: TableKey[T]) -> T: ...
    def free(self, i: int) -> HostFree: ...
    def held(self, i: int) -> tuple[ComputeHostDescriptor, tuple[VmConfiguration, ...]]:
        """Row i's descriptor as held, and the claims pending on it (nothing built): for what
        no claim writes."""
        ...

    def __len__(self) -> int: ...


def slots_of(fleet: IndexedFleet, i: int) -> list[int]:
    """The node slots host i has."""
    return [j for j in range(fleet.max_nodes) if fleet.node_id[i, j] >= 0]


def same_objects(new: Sequence[object], old: Sequence[object]) -> bool:
    """Whether two sequences hold the very same objects, in order. Descriptors are immutable, and
    a claim rebuilds only what it changes: a node it did not touch keeps its objects, and what was
    derived from them still holds."""
    return len(new) == len(old) and all(map(is_, new, old))


def node_parts[P](
    host: ComputeHostDescriptor,
    before: ComputeHostDescriptor,
    parts_before: Sequence[P],
    unchanged: Callable[[NumaNode, NumaNode, P], bool],
    compute: Callable[[int, NumaNode], P],
) -> tuple[P, ...]:
    """A kind's part per node of `host`, a new version of `before` (same node ids, in order):
    kept from `parts_before` where `unchanged(node, node before, part before)`, else computed;
    `parts_before` itself when every node's part is kept (the index refills no column then)."""
    parts = tuple(
        parts_before[j] if unchanged(node, old, parts_before[j]) else compute(j, node)
        for j, (node, old) in enumerate(zip(host.numa_nodes, before.numa_nodes, strict=True))
    )
    if isinstance(parts_before, tuple) and same_objects(parts, parts_before):
        return parts_before
    return parts
