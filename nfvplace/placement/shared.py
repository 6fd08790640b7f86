"""Oversubscribed plain VMs: vCPUs floating over shared PUs of one node.

A node's shared pool is its eligible PUs in state `shared` plus free PUs that carry an
`oversubscription_ratio` (PUs the operator designated for sharing). A PU with ratio r and usage u has
room for (1 - u) * r more vCPUs. The VM's V vCPUs are spread evenly over the largest set of pool PUs
on which V / |set| fits every PU's room (so shared load stays spread), and its memory comes from the
node's normal memory. Nothing to optimise beyond the choice of node, so no CP-SAT model is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from .hostview import SharedPu
from .request import SharedDemand


def choose_pus(shared: Sequence[SharedPu], demand: SharedDemand) -> tuple[SharedPu, ...] | None:
    """The PUs of a node's shared pool the VM's vCPUs are spread over (None: no set fits)."""
    pool = sorted(shared, key=lambda p: (-p.spare_vcpus, p.pu))
    for size in range(len(pool), 0, -1):
        chosen = pool[:size]
        if Fraction(demand.vcpus, size) <= chosen[-1].spare_vcpus:  # exact: no rounding
            return tuple(sorted(chosen, key=lambda p: p.pu))
    return None


def charge(shared: Sequence[SharedPu], chosen: Sequence[SharedPu], vcpus: int) -> list[SharedPu]:
    """The pool after `vcpus` vCPUs are spread evenly over `chosen` (as the claim records it)."""
    share = Fraction(vcpus, len(chosen))
    picked = {p.pu for p in chosen}
    return [
        SharedPu(p.pu, p.ratio, p.usage + share / p.ratio) if p.pu in picked else p for p in shared
    ]
