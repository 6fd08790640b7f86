"""Floating vCPUs charged on a host's descriptor (`shared.py`'s claim): each PU of the pool they
spread over takes its even share of them, within its oversubscription ratio."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ...exact import rational
from .draft import HostDraft


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
