"""Some rows of a fleet index, read as a fleet of their own (`FleetRows`), for the filter.

The filter's checks are per host: a host's row passes or fails on that row's columns alone. So the
filter run on a few rows of the index gives, row for row, what it gives on the whole index; the
engine filters the hosts it is likely to choose first (`engine/batched.py`) instead of all of them.
Columns are copied for the rows taken (a few hundred of 10,000), each kind's when it is first read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from functools import cached_property
from typing import Any, cast

import numpy as np

from ...models.chd import ComputeHostDescriptor
from ..resources.base import HostFree, IntArray, Table, TableKey, Vocabulary
from .fleet import FleetIndex


def _mapping_rows(value: dict[Any, Any], taken: FleetRows) -> Any:
    """A per-host mapping for the rows taken: host-keyed (by row), or by name, then by host."""
    if isinstance(next(iter(value), None), str):  # keys are all names or all host indices
        return {name: _mapping_rows(per, taken) for name, per in value.items()}
    if len(value) < len(taken):
        position = taken.position
        return {position[i]: v for i, v in value.items() if i in position}
    return {r: value[i] for r, i in enumerate(taken.listed) if i in value}


_FIELDS: dict[type, tuple[str, ...]] = {}


def table_rows[T: Table](table: T, taken: FleetRows) -> T:
    """`table`'s columns and per-host mappings for the rows taken only, in their order."""
    names = _FIELDS.get(type(table))
    if names is None:
        fields = dataclasses.fields(table)  # type: ignore[arg-type]
        names = _FIELDS[type(table)] = tuple(field.name for field in fields)
    values: dict[str, Any] = {}
    for name in names:
        value = getattr(table, name)
        if isinstance(value, np.ndarray):
            value = value.take(taken.rows, axis=0)
        elif isinstance(value, dict):
            value = _mapping_rows(value, taken)
        values[name] = value
    return type(table)(**values)


class _Hosts:
    """The descriptors of the rows taken (read from the index when asked)."""

    def __init__(self, fleet: FleetIndex, rows: list[int]) -> None:
        self._fleet, self._rows = fleet, rows

    def __getitem__(self, r: int) -> ComputeHostDescriptor:
        return self._fleet.hosts[self._rows[r]]

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[ComputeHostDescriptor]:
        return (self._fleet.hosts[i] for i in self._rows)


class FleetRows:
    """Rows `rows` of `fleet` (row r is host `rows[r]`), with what the kinds read of a fleet."""

    def __init__(self, fleet: FleetIndex, rows: IntArray) -> None:
        self.fleet = fleet
        self.rows = rows
        self.listed: list[int] = rows.tolist()
        self.hosts = _Hosts(fleet, self.listed)
        self.node_id: IntArray = fleet.node_id.take(rows, axis=0)
        self.max_nodes = fleet.max_nodes
        self.vocab: Vocabulary = fleet.vocab
        self._tables: dict[str, Table] = {}

    @cached_property
    def host_ids(self) -> list[str]:
        return [self.fleet.host_ids[i] for i in self.listed]

    @cached_property
    def position(self) -> dict[int, int]:
        """Host index -> row."""
        return {i: r for r, i in enumerate(self.listed)}

    def table[T: Table](self, kind: TableKey[T]) -> T:
        found = self._tables.get(kind.name)
        if found is None:
            found = self._tables[kind.name] = table_rows(self.fleet.table(kind), self)
        return cast(T, found)

    def free(self, r: int) -> HostFree:
        return self.fleet.free(self.listed[r])

    def __len__(self) -> int:
        return len(self.listed)
