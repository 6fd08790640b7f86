"""Placement policies as objectives, one module each (as the kubelet's Topology Manager has one per
policy): `pack` (default), `spread`, `least_fragmentation`.

A policy orders the hosts that pass the filter (a vectorised score, `host_keys`; ties broken by a
hash of the host id mixed with `seed`, so the same input and seed give the same answer), says that
score in words (`score_terms`), and sets the node-level costs of the exact model (`node_cost`). In
every policy the model first minimises stranded threads (an idle sibling kept for an isolated vCPU,
a core left half used), weight `STRAND` per thread. A policy names no resource kind: it reads the
kinds' measures (`measures.py`, the kinds' hooks in `resources/scoring.py`).
"""

from __future__ import annotations

import numpy as np

from ...index import FleetIndex
from ...options import Options, Policy
from ...request import CpuSetDemand, Request
from ...resources.base import HostFree, IntArray
from . import least_fragmentation, pack, spread
from .measures import Objective

POLICIES: dict[Policy, Objective] = {
    Policy.pack: pack.PACK,
    Policy.spread: spread.SPREAD,
    Policy.least_fragmentation: least_fragmentation.LEAST_FRAGMENTATION,
}

POLICY_SCORES = {policy.value: objective.score for policy, objective in POLICIES.items()}
"""What each policy's host score counts, in words."""

NODE_COST = (
    "fit of the chosen NUMA nodes under the policy ("
    + "; ".join(
        f"{policy.value}: {objective.node_cost_text}" for policy, objective in POLICIES.items()
    )
    + "), plus 100 per usable port on a node whose cpu-set needs none"
)


def _mix(seed: int) -> np.uint64:
    x = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & 0xFFFFFFFF
    return np.uint64(x)


def host_keys(
    fleet: FleetIndex, request: Request, options: Options, node_ok: dict[int, np.ndarray]
) -> IntArray:
    """One int64 per host; the lower, the better (score in the high bits, tie-break in the low)."""
    score = POLICIES[options.policy].host_score(fleet, request, node_ok)
    keys: IntArray = score.astype(np.int64)  # a copy: the score may be a column the index keeps
    keys *= 1 << 32
    tie = fleet.tiebreak ^ _mix(options.seed)
    keys += tie.view(np.int64)  # crc32 values: below 2**32, the same as `astype`
    return keys


def score_terms(
    fleet: FleetIndex, i: int, request: Request, options: Options
) -> list[tuple[str, int, str]]:
    """Host i's policy score as (part, points, what it counts), in words; the parts add up to the
    score `host_keys` ranks by (lower is better)."""
    return POLICIES[options.policy].terms(fleet, i, request)


def node_cost(
    free: HostFree, slot: int, cs: CpuSetDemand, request: Request, options: Options
) -> int:
    """The cost of putting `cs` on node slot `slot` of a host (`NODE_COST`)."""
    return POLICIES[options.policy].node_cost(free, slot, cs, request)
