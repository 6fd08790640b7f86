"""A node's shared pool as placement sees it (`shared.py`): each shared PU's spare vCPUs, worked
out in fractions, read again after a claim only for the PUs that changed, and how floating vCPUs
are spread over the pool and charged on it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from itertools import compress
from operator import attrgetter, is_not

from ...exact import rational
from ...models.chd import Cpu, CpuState, NumaNode
from ...models.configuration import VmConfiguration

KEPT_PUS = 65536  # distinct (PU, ratio, usage) kept: a fleet of a thousand hosts has about 10,000
_SHARED, _FREE = CpuState.shared, CpuState.free


@dataclass(frozen=True, slots=True)
class SharedPu:
    pu: int
    ratio: Fraction
    usage: Fraction
    spare_vcpus: Fraction = field(init=False, repr=False, compare=False)  # worked out once
    has_room: bool = field(init=False, repr=False, compare=False)  # spare_vcpus > 0

    def __post_init__(self) -> None:
        spare_vcpus = max((1 - self.usage) * self.ratio, Fraction(0))
        object.__setattr__(self, "spare_vcpus", spare_vcpus)
        object.__setattr__(self, "has_room", spare_vcpus > 0)


Pool = tuple[SharedPu, ...]
_PU, _SPARE = attrgetter("pu"), attrgetter("spare_vcpus")


_NONE = Fraction(0)


def spare(pool: Sequence[SharedPu]) -> Fraction:
    """The pool's spare vCPUs: its PUs' fractions summed over whole numbers (adding Fractions
    one by one normalised each partial sum; a node's PUs mostly share one denominator)."""
    if not pool:
        return _NONE
    n, d = 0, 1
    for p in pool:
        s = p.spare_vcpus
        sn, sd = s.numerator, s.denominator
        if sd == d:
            n += sn
        else:
            n, d = n * sd + sn * d, d * sd
    return Fraction(n, d)


def _in_pool(cpu: Cpu) -> bool:
    return cpu.eligible and (
        cpu.state is CpuState.shared
        or (cpu.state is CpuState.free and bool(cpu.oversubscription_ratio))
    )


def _shared_pu(cpu: Cpu) -> SharedPu:
    return _shared_pu_of(cpu.id, cpu.oversubscription_ratio, cpu.usage_ratio)


@lru_cache(maxsize=KEPT_PUS)
def _shared_pu_of(pu: int, ratio: float | None, usage: float | None) -> SharedPu:
    """A shared PU by its id, ratio and usage: worked out in fractions once per distinct triple
    (a node's shared PUs share its ratio and usage; a fleet's nodes, a few hundred usages)."""
    return SharedPu(pu, rational(ratio) or Fraction(1), rational(usage))


def shared_pus(node: NumaNode) -> Pool:
    """The node's shared pool: eligible PUs in state `shared` and free PUs given a ratio."""
    return tuple(  # `_in_pool` written out: a call per PU was a third of the pass
        _shared_pu_of(cpu.id, cpu.oversubscription_ratio, cpu.usage_ratio)
        for cpu in node.cpus
        if cpu.eligible
        and (cpu.state is _SHARED or (cpu.state is _FREE and bool(cpu.oversubscription_ratio)))
    )


def shared_pus_again(node: NumaNode, old: NumaNode, pool_before: Pool) -> Pool:
    """`shared_pus(node)` of a new version of `old` whose pool was `pool_before`: the PUs that
    are the same objects at the same places keep their entries (a claim changes the few PUs it
    takes; working out a PU's spare vCPUs in fractions costs more than the rest of the pass), and
    the pool is `pool_before` itself when no PU that changed is or was in it."""
    if len(node.cpus) != len(old.cpus):
        return shared_pus(node)
    changed = list(compress(node.cpus, map(is_not, node.cpus, old.cpus)))
    was = list(compress(old.cpus, map(is_not, node.cpus, old.cpus)))
    if not any(map(_in_pool, changed)) and not any(map(_in_pool, was)):
        return pool_before
    pool: list[SharedPu] = []
    k = 0  # entries of `pool_before` passed: it lists the old PUs in the pool, in order
    for cpu, before in zip(node.cpus, old.cpus, strict=True):
        if cpu is before:
            if _in_pool(cpu):
                pool.append(pool_before[k])
                k += 1
            continue
        if _in_pool(before):
            k += 1
        if _in_pool(cpu):
            pool.append(_shared_pu(cpu))
    return tuple(pool)


def choose_pus(shared: Sequence[SharedPu], vcpus: int) -> Pool | None:
    """The PUs of a node's shared pool `vcpus` floating vCPUs are spread over, at least one PU
    each (None: no set fits)."""
    if len(shared) < max(vcpus, 1):
        return None
    # by spare vCPUs, most first, then by PU: sorted by PU, then stably by spare (reverse keeps
    # equal keys in order), with no negated Fraction made per PU
    pool = sorted(sorted(shared, key=_PU), key=_SPARE, reverse=True)
    for size in range(len(pool), max(vcpus, 1) - 1, -1):
        room = pool[size - 1].spare_vcpus
        if vcpus * room.denominator <= size * room.numerator:  # vcpus / size <= room, exactly
            return tuple(sorted(pool[:size], key=_PU))
    return None


def charge(shared: Sequence[SharedPu], chosen: Sequence[SharedPu], vcpus: int) -> list[SharedPu]:
    """The pool after `vcpus` vCPUs are spread evenly over `chosen` (as the claim records it)."""
    share = Fraction(vcpus, len(chosen))
    picked = {p.pu for p in chosen}
    return [
        SharedPu(p.pu, p.ratio, p.usage + share / p.ratio) if p.pu in picked else p for p in shared
    ]


def charges(config: VmConfiguration) -> list[tuple[Fraction, tuple[int, ...]]]:
    """Each PU set `config`'s floating vCPUs are charged on, with the share of a vCPU each PU of
    it takes (what `shared.claim` charges, in its order)."""
    out: list[tuple[Fraction, tuple[int, ...]]] = []
    if config.shared is not None and config.shared.cpus:
        out.append((Fraction(config.shared.vcpus, len(config.shared.cpus)), config.shared.cpus))
    for cs in config.cpu_sets:
        if cs.floating is not None and cs.floating.cpus:
            out.append((Fraction(len(cs.floating.vcpus), len(cs.floating.cpus)), cs.floating.cpus))
    return out


def pools_charged(pools: tuple[Pool, ...], config: VmConfiguration) -> tuple[Pool, ...] | None:
    """The pools once `config`'s floating vCPUs are charged, as `shared_pus_again` reads the
    charged PUs back (their usage a float again); None when a PU charged is not in a pool, or
    would be used beyond its ratio (the claim would conflict)."""
    where = {p.pu: (j, k) for j, pool in enumerate(pools) for k, p in enumerate(pool)}
    nodes = [list(pool) for pool in pools]
    for share, pus in charges(config):
        for pu in pus:
            at = where.get(pu)
            if at is None:
                return None
            old = nodes[at[0]][at[1]]
            exact = old.usage + share / old.ratio
            if exact > 1:
                return None
            nodes[at[0]][at[1]] = SharedPu(pu, old.ratio, rational(max(float(exact), 0.0)))
    return tuple(tuple(pool) for pool in nodes)
