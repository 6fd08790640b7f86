"""A host's free resources, classified per kind the way placement counts them (pure, cheap: each
kind makes one pass over its part of the host)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ..resources import implementing
from ..resources.base import HostFree
from ..resources.stages import Free, FreeClaimed

_FREE: tuple[Free[Any], ...] = implementing(Free)
_BY_NAME = {kind.name: kind for kind in _FREE}
_DELTAS: tuple[FreeClaimed[Any], ...] = implementing(FreeClaimed)
_CLAIMED = {kind.name: kind for kind in _DELTAS}


class LazyParts(Mapping[str, object]):
    """A host's free parts, each kind's worked out from the host when first read: an index built
    for one evaluation reads the parts of the kinds whose columns the VM's filter reads, and every
    part of the few hosts the exact stage decides, not every part of every host."""

    __slots__ = ("_host", "_made")

    def __init__(self, host: ComputeHostDescriptor) -> None:
        self._host = host
        self._made: dict[str, object] = {}

    def __getitem__(self, name: str) -> object:
        made = self._made
        if name in made:
            return made[name]
        part = made[name] = _BY_NAME[name].free(self._host)  # KeyError: no such part
        return part

    def __iter__(self) -> Iterator[str]:
        return iter(_BY_NAME)

    def __len__(self) -> int:
        return len(_BY_NAME)


def free_of(
    host: ComputeHostDescriptor,
    before: tuple[ComputeHostDescriptor, HostFree] | None = None,
    *,
    lazy: bool = False,
) -> HostFree:
    """`host`'s free resources; with `before` (an earlier version of the host, and its free
    resources), each kind keeps its parts of the nodes the new version did not change. `lazy`
    (without `before`): each part worked out when first read (`LazyParts`)."""
    node_ids = tuple(node.id for node in host.numa_nodes)
    if lazy and before is None:
        parts: Mapping[str, object] = LazyParts(host)
    elif before is None or before[1].node_ids != node_ids:
        parts = {kind.name: kind.free(host) for kind in _FREE}
    else:
        old, free = before
        parts = {kind.name: kind.free_again(host, old, free.parts[kind.name]) for kind in _FREE}
    return HostFree(id=host.id, node_ids=node_ids, parts=parts)


def free_claimed(
    host: ComputeHostDescriptor,
    before: tuple[ComputeHostDescriptor, HostFree],
    config: VmConfiguration,
) -> HostFree:
    """`free_of(host, before)` where `host` is `claims.claim(before[0], config)`: each kind that
    can works its part out from the configuration (`FreeClaimed`), the others read the host."""
    old, free = before
    parts: dict[str, object] = {}
    for kind in _FREE:
        part = free.parts[kind.name]
        delta = _CLAIMED.get(kind.name)
        new = None if delta is None else delta.free_claimed(old, part, config, host)
        parts[kind.name] = kind.free_again(host, old, part) if new is None else new
    return HostFree(id=host.id, node_ids=free.node_ids, parts=parts)
