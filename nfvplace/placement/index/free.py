"""A host's free resources, classified per kind the way placement counts them (pure, cheap: each
kind makes one pass over its part of the host)."""

from __future__ import annotations

from ...models.chd import ComputeHostDescriptor
from ..resources import KINDS
from ..resources.base import HostFree


def free_of(host: ComputeHostDescriptor) -> HostFree:
    return HostFree(
        id=host.id,
        node_ids=tuple(node.id for node in host.numa_nodes),
        parts={kind.name: kind.free(host) for kind in KINDS},
    )
