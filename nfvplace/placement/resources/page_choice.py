"""Page sizes chosen on the node (`hugepages.size: large|any`), as Nova chooses them.

A cpu-set whose page size is a word has its whole memory backed by one page size of the node it
lands on: the largest hugepage size whose free pages hold the memory exactly (a whole number of
pages); with `any`, normal memory when no hugepage size does. The memory kind resolves the word per
node into a given size (`Backing`), so every later stage sees a cpu-set with pages of one size.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...models.vmd import PageSizeChoice
from ..reasons import Reason
from ..request import CpuSetDemand
from .base import IntArray
from .filtering import NodeNeed

KIB_PER_MIB = 1024


@dataclass(frozen=True, slots=True)
class Backing:
    """How a cpu-set's memory is backed on one node: pages of one size, and normal memory."""

    size_kib: int | None  # None: normal memory only
    pages: int
    normal_mib: int


def backing(
    cs: CpuSetDemand, hugepages_free: Mapping[int, int], normal_free_mib: int
) -> Backing | None:
    """The cpu-set's memory on a node with these free pages and normal memory (None: it does not
    fit there); a cpu-set of a given page size keeps it."""
    if cs.page_choice is None:
        return Backing(cs.hugepage_size_kib, cs.hugepage_count, cs.normal_mib)
    kib = cs.memory_mib * KIB_PER_MIB
    for size in sorted(hugepages_free, reverse=True):
        if kib % size == 0 and hugepages_free[size] >= kib // size:
            return Backing(size, kib // size, 0)
    if cs.page_choice is PageSizeChoice.any and normal_free_mib >= cs.memory_mib:
        return Backing(None, 0, cs.memory_mib)
    return None


def choice_need(
    cs: CpuSetDemand, sizes: list[int], pages: IntArray, normal_free: IntArray
) -> NodeNeed:
    """The filter's check for a chosen page size (exact for one cpu-set on a node): some size
    whose free pages hold the memory, or (`any`) free normal memory. `pages` is hosts x slots x
    sizes (the columns of `sizes`)."""
    kib = cs.memory_mib * KIB_PER_MIB
    best = np.zeros_like(normal_free)  # MiB of the memory the best option holds
    for column, size in enumerate(sizes):
        if kib % size == 0:
            held = np.minimum(pages[:, :, column] * size // KIB_PER_MIB, cs.memory_mib)
            best = np.maximum(best, held)
    if cs.page_choice is PageSizeChoice.any:
        best = np.maximum(best, np.minimum(normal_free, cs.memory_mib))
        what = "MiB in free pages of one size (or free memory)"
    else:
        what = "MiB in free large pages of one size"
    return NodeNeed(
        Reason.hugepages,
        f"{cs.memory_mib} {what}",
        best >= cs.memory_mib,
        best,
        cs.memory_mib,
        what,
    )
