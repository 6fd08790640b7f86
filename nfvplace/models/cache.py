"""A host's L3 cache allocation (Intel RDT CAT, Linux resctrl), part of the Compute Host Descriptor:
each L3 cache's ways and the ways already given out exclusively."""

from __future__ import annotations

from pydantic import Field

from .base import Model, NonNegativeInt, PositiveInt, Text
from .units import KiB


class CacheWays(Model):
    """Ways of an L3 cache given out exclusively: `ways` contiguous ways from `first_way`."""

    first_way: NonNegativeInt
    ways: PositiveInt
    owner: Text | None = Field(None, description="VM holding them (None: the operator's)")

    @property
    def last_way(self) -> int:
        return self.first_way + self.ways - 1


class CacheDomain(Model):
    """One L3 cache (a resctrl domain): the NUMA nodes whose PUs share it, its ways, and the ways
    already given out."""

    id: NonNegativeInt = Field(description="L3 cache id (the resctrl domain id)")
    numa_nodes: tuple[NonNegativeInt, ...] = Field(
        min_length=1, description="NUMA nodes whose PUs share this cache"
    )
    ways: PositiveInt = Field(description="Ways of the cache (bits of resctrl's cbm_mask)")
    way_kib: KiB | None = Field(None, description="Size of one way (cache size / ways)")
    allocations: tuple[CacheWays, ...] = Field(
        (), description="Ways given out exclusively, as contiguous ranges"
    )


class CacheAllocation(Model):
    """L3 cache allocation (Intel RDT CAT, Linux resctrl): exclusive ways for pinned vCPUs."""

    classes: PositiveInt | None = Field(
        None,
        description="Classes of service (resctrl's num_closids), the default class included; "
        "unset: unknown (an hwloc export does not say), and no VM asking ways is placed here",
    )
    classes_used: NonNegativeInt = Field(
        0, description="Classes taken by groups other than the allocations' owners"
    )
    min_ways: PositiveInt = Field(1, description="Fewest ways one class may have (min_cbm_bits)")
    domains: tuple[CacheDomain, ...] = Field(
        min_length=1, description="The host's L3 caches, one per resctrl domain"
    )


__all__ = ["CacheAllocation", "CacheDomain", "CacheWays"]
