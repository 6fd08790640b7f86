"""A node's shared pool of PUs and floating vCPUs spread over it (`shared.py`'s arithmetic, pure):
which PUs are in the pool, which a number of vCPUs is spread over, and their charge on a host's
descriptor."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ...exact import rational
from ...models.chd import CpuState, NumaNode
from .draft import HostDraft


@dataclass(frozen=True, slots=True)
class SharedPu:
    pu: int
    ratio: Fraction
    usage: Fraction

    @property
    def spare_vcpus(self) -> Fraction:
        return max((1 - self.usage) * self.ratio, Fraction(0))


Pool = tuple[SharedPu, ...]


def spare(pool: Sequence[SharedPu]) -> Fraction:
    return sum((p.spare_vcpus for p in pool), Fraction(0))


def shared_pus(node: NumaNode) -> Pool:
    """The node's shared pool: eligible PUs in state `shared` and free PUs given a ratio."""
    shared: list[SharedPu] = []
    for cpu in node.cpus:
        if cpu.eligible and (
            cpu.state is CpuState.shared
            or (cpu.state is CpuState.free and cpu.oversubscription_ratio)
        ):
            ratio = rational(cpu.oversubscription_ratio) or Fraction(1)
            shared.append(SharedPu(cpu.id, ratio, rational(cpu.usage_ratio)))
    return tuple(shared)


def choose_pus(shared: Sequence[SharedPu], vcpus: int) -> Pool | None:
    """The PUs of a node's shared pool `vcpus` floating vCPUs are spread over, at least one PU
    each (None: no set fits)."""
    pool = sorted(shared, key=lambda p: (-p.spare_vcpus, p.pu))
    for size in range(len(pool), max(vcpus, 1) - 1, -1):
        chosen = pool[:size]
        if Fraction(vcpus, size) <= chosen[-1].spare_vcpus:  # exact: no rounding
            return tuple(sorted(chosen, key=lambda p: p.pu))
    return None


def charge(shared: Sequence[SharedPu], chosen: Sequence[SharedPu], vcpus: int) -> list[SharedPu]:
    """The pool after `vcpus` vCPUs are spread evenly over `chosen` (as the claim records it)."""
    share = Fraction(vcpus, len(chosen))
    picked = {p.pu for p in chosen}
    return [
        SharedPu(p.pu, p.ratio, p.usage + share / p.ratio) if p.pu in picked else p for p in shared
    ]


def charge_pus(draft: HostDraft, vcpus: int, pus: tuple[int, ...], sign: int, where: str) -> None:
    share = Fraction(vcpus, len(pus))
    for pu in pus:
        cpu = draft.cpu(pu)
        if cpu is None:
            draft.fail(f"PU {pu} does not exist on {draft.host.id}", where)
            continue
        state = str(cpu.get("state", "free"))
        if sign > 0 and (not cpu.get("eligible", True) or state == "dedicated"):
            draft.fail(f"PU {pu} cannot be shared ({state})", where)
            continue
        _charge_pu(draft, cpu, pu, state, sign * share, where)


def _charge_pu(
    draft: HostDraft, cpu: dict[str, Any], pu: int, state: str, share: Fraction, where: str
) -> None:
    ratio = cpu.get("oversubscription_ratio") or 1.0
    # exact: the stored ratios read as the fractions they stand for (5/6, not 0.833333333)
    exact = rational(cpu.get("usage_ratio")) + share / (rational(ratio) or 1)
    usage = float(exact)
    if share > 0 and exact > 1:
        draft.fail(f"PU {pu} would be used {usage:.2f} of its ratio {ratio}", where)
    usage = max(usage, 0.0)
    cpu.update(
        state="shared" if usage > 1e-9 or state == "shared" else "free",
        oversubscription_ratio=ratio,
        usage_ratio=usage,
    )
