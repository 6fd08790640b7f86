"""The shared pool's arithmetic in whole numbers (`spare`, `choose_pus`) and `SharedKind.decide`'s
order give the answers of the plain Fraction arithmetic they replace, kept here as the reference:
the same values, the same PUs in the same order, the same node."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nfvplace.placement.options import Policy
from nfvplace.placement.resources.kind import Refusal
from nfvplace.placement.resources.shared import SHARED_CPUS, SharedChoice
from nfvplace.placement.resources.shared_pool import Pool, SharedPu, choose_pus, spare

RATIOS = [Fraction(1), Fraction(2), Fraction(3, 2), Fraction(16), Fraction(7, 3), Fraction(1, 3)]
USAGES = [Fraction(0), Fraction(1, 2), Fraction(5, 6), Fraction(1), Fraction(1, 7), Fraction(2, 3)]


def reference_spare(pool: Sequence[SharedPu]) -> Fraction:
    return sum((p.spare_vcpus for p in pool), Fraction(0))


def reference_choose(shared: Sequence[SharedPu], vcpus: int) -> Pool | None:
    pool = sorted(shared, key=lambda p: (-p.spare_vcpus, p.pu))
    for size in range(len(pool), max(vcpus, 1) - 1, -1):
        chosen = pool[:size]
        if Fraction(vcpus, size) <= chosen[-1].spare_vcpus:
            return tuple(sorted(chosen, key=lambda p: p.pu))
    return None


@st.composite
def pools(draw: st.DrawFn, first: int = 0) -> Pool:
    pus = draw(st.lists(st.integers(first, first + 40), max_size=8, unique=True))
    return tuple(
        SharedPu(pu, draw(st.sampled_from(RATIOS)), draw(st.sampled_from(USAGES))) for pu in pus
    )


@settings(max_examples=1500, deadline=None)
@given(pool=pools(), vcpus=st.integers(0, 12))
def test_spare_and_choose_are_the_fraction_arithmetics(pool: Pool, vcpus: int) -> None:
    room = spare(pool)
    assert room == reference_spare(pool)
    assert type(room) is Fraction
    assert choose_pus(pool, vcpus) == reference_choose(pool, vcpus)


def reference_decide(pools: Sequence[Pool], ok: frozenset[int], vcpus: int, spread: bool) -> Any:
    nodes = [(reference_spare(pool), n, pool) for n, pool in enumerate(pools) if n in ok]
    for room, node, pool in sorted(nodes, key=lambda e: ((-e[0] if spread else e[0]), e[1])):
        pus = reference_choose(pool, vcpus)
        if pus is not None:
            return SharedChoice(node, pus, room)
    return None


@settings(max_examples=1000, deadline=None)
@given(
    pools=st.lists(st.integers(0, 3), min_size=1, max_size=4).flatmap(
        lambda ks: st.tuples(*(pools(100 * k) for k in ks))
    ),
    ok=st.frozensets(st.integers(0, 3)),
    vcpus=st.integers(1, 8),
    policy=st.sampled_from([Policy.pack, Policy.spread, Policy.least_fragmentation]),
)
def test_decide_takes_the_node_the_fraction_arithmetic_takes(
    pools: tuple[Pool, ...], ok: frozenset[int], vcpus: int, policy: Policy
) -> None:
    free: Any = SimpleNamespace(of=lambda kind: pools, node_ids=tuple(range(len(pools))))
    request: Any = SimpleNamespace(shared=SimpleNamespace(id=0, vcpus=vcpus))
    options: Any = SimpleNamespace(policy=policy)
    got = SHARED_CPUS.decide(free, request, {0: ok}, options)
    expected = reference_decide(pools, ok, vcpus, policy is Policy.spread)
    if expected is None:
        assert isinstance(got, Refusal)
    else:
        assert got == expected
        assert isinstance(got, SharedChoice)
        assert type(got.room) is Fraction
