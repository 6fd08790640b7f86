"""Oversubscribed plain VMs: vCPUs floating over shared PUs of one node.

A node's shared pool is its eligible PUs in state `shared` plus free PUs that carry an
`oversubscription_ratio` (PUs the operator designated for sharing). A PU with ratio r and usage u has
room for (1 - u) * r more vCPUs. The VM's V vCPUs are spread evenly over the largest set of pool PUs
on which V / |set| fits every PU's room (so shared load stays spread), and its memory comes from the
node's normal memory. Nothing to optimise beyond the choice of node, so no CP-SAT model is built.
"""

from __future__ import annotations

from fractions import Fraction

from .hostview import NodeView, SharedPu
from .request import SharedDemand


def choose_pus(node: NodeView, demand: SharedDemand) -> tuple[SharedPu, ...] | None:
    pool = sorted(node.shared, key=lambda p: (-p.spare_vcpus, p.pu))
    for size in range(len(pool), 0, -1):
        chosen = pool[:size]
        if Fraction(demand.vcpus, size) <= chosen[-1].spare_vcpus:  # exact: no rounding
            return tuple(sorted(chosen, key=lambda p: p.pu))
    return None
