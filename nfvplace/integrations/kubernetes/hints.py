"""The kubelet's Topology Manager policies over NUMA masks: a port of
`pkg/kubelet/cm/topologymanager` (v1.34: `policy.go`, `policy_none.go`, `policy_best_effort.go`,
`policy_restricted.go`, `policy_single_numa_node.go`, `numa_info.go`, `bitmask/bitmask.go`).

A mask is an `int` whose bit n is NUMA node n (the kubelet's `bitmask.BitMask`, a uint64); a hint's
mask is None when the provider has no preference. Hint providers give, per resource, `None` (no
preference), an empty list (no possible affinity) or a list of hints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product

NONE, BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE = (
    "none",
    "best-effort",
    "restricted",
    "single-numa-node",
)

MAX_PERMUTATIONS = 1_000_000
"""Most hint permutations merged (the product of the providers' hint counts). The kubelet merges
them all; past this nfvplace does not decide (a node of many NUMA nodes under `best-effort` or
`restricted`, with several resources, has millions)."""

ProviderHints = Mapping[str, "Sequence[Hint] | None"] | None
"""One hint provider's hints per resource (the kubelet's `map[string][]TopologyHint`)."""


class UndecidedError(Exception):
    """Deciding as the kubelet would takes more than nfvplace spends on one node."""


@dataclass(frozen=True, slots=True)
class Hint:
    """A `TopologyHint`: the NUMA nodes to allocate from (None: any), and whether it is preferred."""

    mask: int | None
    preferred: bool


def mask_of(nodes: Sequence[int]) -> int:
    mask = 0
    for node in nodes:
        mask |= 1 << node
    return mask


def bits(mask: int) -> list[int]:
    """The NUMA nodes of a mask, lowest first (`GetBits`)."""
    return [n for n in range(mask.bit_length()) if mask >> n & 1]


def count(mask: int) -> int:
    return mask.bit_count()


def is_narrower(a: int, b: int) -> bool:
    """`IsNarrowerThan`: fewer nodes, or as many with the lower-numbered ones (`IsLessThan`)."""
    return a < b if count(a) == count(b) else count(a) < count(b)


@dataclass(frozen=True)
class NumaInfo:
    """`NUMAInfo`: the node's NUMA node ids and their distances (rows by node id)."""

    nodes: tuple[int, ...]
    distances: Mapping[int, Mapping[int, int]] | None = None

    @property
    def default_mask(self) -> int:
        return mask_of(self.nodes)

    def narrowest(self, a: int, b: int) -> int:
        return a if is_narrower(a, b) else b

    def average_distance(self, mask: int) -> float:
        nodes = bits(mask)
        if not nodes or self.distances is None:
            return 0.0
        total = sum(self.distances[i][j] for i in nodes for j in nodes)
        return total / (len(nodes) * len(nodes))

    def closest(self, a: int, b: int) -> int:
        """`Closest`: the narrower mask; as wide: the shorter average distance, then the lower."""
        if count(a) != count(b):
            return self.narrowest(a, b)
        da, db = self.average_distance(a), self.average_distance(b)
        if da == db:
            return a if a < b else b
        return a if da < db else b


def filter_providers_hints(providers: Sequence[ProviderHints]) -> list[list[Hint]]:
    """`filterProvidersHints`: one list of hints per resource; no preference is `[{nil, true}]`,
    no possible affinity `[{nil, false}]`."""
    out: list[list[Hint]] = []
    for hints in providers:
        if not hints:
            out.append([Hint(None, True)])
            continue
        for resource_hints in hints.values():
            if resource_hints is None:
                out.append([Hint(None, True)])
            elif not resource_hints:
                out.append([Hint(None, False)])
            else:
                out.append(list(resource_hints))
    return out


def merge_permutation(default: int, permutation: Sequence[Hint]) -> Hint:
    """`mergePermutation`: the AND of the masks; preferred when every hint is and all masks agree."""
    preferred = True
    masks: list[int] = []
    for hint in permutation:
        if hint.mask is not None:
            masks.append(hint.mask)
            if hint.mask != masks[0]:
                preferred = False
        if not hint.preferred:
            preferred = False
    merged = default
    for mask in masks:
        merged &= mask
    return Hint(merged, preferred)


def _narrowest_count(hints: Sequence[Hint]) -> int | None:
    """The node count of `narrowestHint` (which compares each hint with the first it kept)."""
    best: int | None = None
    for hint in hints:
        if hint.mask is None:
            continue
        if best is None or is_narrower(hint.mask, best):
            best = hint.mask
    return None if best is None else count(best)


class HintMerger:
    """`HintMerger`: the best hint over every permutation of the providers' hints."""

    def __init__(
        self, numa: NumaInfo, hints: list[list[Hint]], policy: str, prefer_closest: bool
    ) -> None:
        self.numa = numa
        self.hints = hints
        self.closest = prefer_closest and policy != SINGLE_NUMA_NODE
        counts = [c for c in (_narrowest_count(h) for h in hints) if c is not None]
        self.best_non_preferred = max(counts, default=0)

    def _compare_masks(self, current: Hint, candidate: Hint) -> Hint:
        assert current.mask is not None
        assert candidate.mask is not None
        if candidate.mask == current.mask:
            return current
        pick = self.numa.closest if self.closest else self.numa.narrowest
        return current if pick(current.mask, candidate.mask) == current.mask else candidate

    def compare(self, current: Hint | None, candidate: Hint) -> Hint | None:
        """`HintMerger.compare`, case by case as the kubelet writes it."""
        assert candidate.mask is not None
        if count(candidate.mask) == 0:
            return current
        if current is None:
            return candidate
        assert current.mask is not None
        if current.preferred != candidate.preferred:
            return candidate if candidate.preferred else current
        if current.preferred:
            return self._compare_masks(current, candidate)
        best, have, want = self.best_non_preferred, count(current.mask), count(candidate.mask)
        if have > best:  # case 1
            return self._compare_masks(current, candidate)
        if have == best:  # case 2
            return current if want != best else self._compare_masks(current, candidate)
        if want > best:  # case 3a
            return current
        if want == best:  # case 3b
            return candidate
        if want != have:  # cases 3ca, 3cb
            return candidate if want > have else current
        return self._compare_masks(current, candidate)  # case 3cc

    def merge(self) -> Hint:
        combinations = 1
        for hints in self.hints:
            combinations *= len(hints)
        if combinations > MAX_PERMUTATIONS:
            raise UndecidedError(f"{combinations} combinations of topology hints to merge")
        default = self.numa.default_mask
        best: Hint | None = None
        for permutation in product(*self.hints):
            best = self.compare(best, merge_permutation(default, permutation))
        return best if best is not None else Hint(default, False)


def _single_numa_hints(hints: list[list[Hint]]) -> list[list[Hint]]:
    """`filterSingleNumaHints`: preferred hints with no preference or one NUMA node."""
    return [
        [h for h in resource if h.preferred and (h.mask is None or count(h.mask) == 1)]
        for resource in hints
    ]


def merge(
    policy: str, numa: NumaInfo, providers: Sequence[ProviderHints], prefer_closest: bool = False
) -> tuple[Hint, bool]:
    """`Policy.Merge`: the best hint and whether the pod (or container) is admitted."""
    if policy == NONE:
        return Hint(None, False), True
    hints = filter_providers_hints(providers)
    if policy == SINGLE_NUMA_NODE:
        hints = _single_numa_hints(hints)
    best = HintMerger(numa, hints, policy, prefer_closest).merge()
    if policy == SINGLE_NUMA_NODE and best.mask == numa.default_mask:
        best = Hint(None, best.preferred)
    if policy == BEST_EFFORT:
        return best, True
    return best, best.preferred
