"""The resource kinds, one module each; `KINDS` is the registry, and the stages' ordered lists.

Each stage of the pipeline is a small protocol (`stages.py`) and loops over the kinds that implement
it, naming none: `implementing(Protocol)` where the order changes no answer, and one of the tuples
below where it does (each says why). `tests/test_architecture.py` checks that every tuple holds
exactly the kinds that implement its protocol. Adding a kind is a module, a line in `KINDS`, and a
place in the tuples of the stages it implements (see docs/adding-a-resource-kind.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from .cache_ways import CACHE_WAYS
from .capabilities import CAPABILITIES_KIND
from .cpu import CPU
from .devices import DEVICES
from .impact import IMPACT
from .interconnect import INTERCONNECT
from .kind import Decides, Kind
from .memory import MEMORY
from .nics import NICS
from .scoring import Fills
from .shared import SHARED_CPUS
from .stages import (
    Claims,
    CountCaps,
    CountTakes,
    Explains,
    HoldsShares,
    HoldsUnits,
    HostChecks,
    KubeletCounts,
    ModelDemand,
    ModelLimits,
    NodeNeeds,
    RelaxFinish,
    RelaxHosts,
    RelaxNodes,
)

KINDS: tuple[Kind, ...] = (
    CAPABILITIES_KIND,
    CPU,
    SHARED_CPUS,
    MEMORY,
    NICS,
    DEVICES,
    INTERCONNECT,
    IMPACT,
    CACHE_WAYS,
)
"""Every resource kind. Its order decides nothing: the stages whose order matters say it below."""


def implementing[P](protocol: Callable[..., P]) -> tuple[P, ...]:
    """The kinds that implement the stage protocol `protocol`, for a stage whose answer does not
    depend on the order it visits them in (a union, a sum of integers, a lookup by name)."""
    return tuple(cast(P, k) for k in KINDS if isinstance(k, cast(type, protocol)))


# The stages whose order decides an answer. Each tuple holds exactly the kinds that implement its
# protocol (tests/test_architecture.py); a new kind takes the place that gives the answer it means.

HOST_CHECKS: tuple[HostChecks, ...] = (CAPABILITIES_KIND, NICS, DEVICES, IMPACT, CPU, CACHE_WAYS)
"""The filter's host checks (`engine/filter.py`): a host is rejected by the first check it fails,
so this order names the reason: what the host is (processor, hypervisor) before what is free on
it, the scarcest and cheapest to check (ports, devices, instance limits) before cores and caches."""

NODE_NEEDS: tuple[NodeNeeds, ...] = (CPU, SHARED_CPUS, MEMORY, NICS, DEVICES, CACHE_WAYS)
"""The filter's per-node needs of each cpu-set (`engine/filter.py`): when a cpu-set fits no node,
the first need that fails is the one the rejection names (cores before memory before ports)."""

DECIDES: tuple[Decides[Any], ...] = (SHARED_CPUS,)
"""Choices made without the model (`engine/attempt.py`): the first refusal is the host's."""

MODEL_DEMAND: tuple[ModelDemand, ...] = (CPU,)
MODEL_LIMITS: tuple[ModelLimits, ...] = (
    CPU,
    SHARED_CPUS,
    MEMORY,
    NICS,
    DEVICES,
    INTERCONNECT,
    CACHE_WAYS,
)
"""The exact model's variables and constraints, posted in this order (`engine/solver.py`): CP-SAT's
search follows the order of the model, so among layouts of equal cost the one found depends on it."""

BLAME: tuple[ModelLimits, ...] = (NICS, DEVICES, INTERCONNECT, MEMORY, CPU, CACHE_WAYS, SHARED_CPUS)
"""The families an infeasible model is blamed on, tried in this order (`engine/solver.py`): the
first whose removal makes the model feasible is named, so the rarest and most specific limits
(ports, devices, the interconnect) come before the common ones (memory, cores)."""

EXPLAINS: tuple[Explains, ...] = (CPU, SHARED_CPUS, CACHE_WAYS)
"""The `--explain` rows of one host, in the order they are printed (`engine/attempt.py`)."""

COUNT_TAKES: tuple[CountTakes[Any], ...] = (CPU, SHARED_CPUS, MEMORY, NICS)
"""The counting model takes each instance in this order (`joint/counting.py`): the first kind that
misses names why the node stops, the reason the engine's filter would give (cores first)."""

COUNT_CAPS: tuple[CountCaps, ...] = (NICS, IMPACT)
"""Host-wide caps on the count, applied in turn (`joint/counting.py`): on a tie the last names it."""

RELAX_NODES: tuple[RelaxNodes, ...] = (CPU, SHARED_CPUS, MEMORY, NICS, CACHE_WAYS)
RELAX_HOSTS: tuple[RelaxHosts, ...] = (NICS, IMPACT, CACHE_WAYS)
RELAX_FINISH: tuple[RelaxFinish, ...] = (CPU, NICS)
"""The relaxation's terms and constraints, added in this order (`joint/relaxation.py`): as with the
exact model, the order of the model steers which of several optimal plans the solver returns."""

CLAIMS: tuple[Claims, ...] = (
    CPU,
    SHARED_CPUS,
    MEMORY,
    NICS,
    DEVICES,
    INTERCONNECT,
    IMPACT,
    CACHE_WAYS,
)
"""Claiming and releasing on one draft (`claims.py`): a conflict's issues are listed in this order."""

HOLDS_UNITS: tuple[HoldsUnits, ...] = (CPU, NICS, DEVICES, CACHE_WAYS)
"""The store's double-claim guard (`store/resources.py`): every commit writes its claim rows in
this one order, so two commits racing for the same units meet them in the same order (the first
waits for the second's outcome rather than both waiting on each other)."""

HOLDS_SHARES: tuple[HoldsShares, ...] = (MEMORY,)
"""The store's counters of pools of alike units (`store/resources.py`): a commit raises them in
this order, the lock order, as `HOLDS_UNITS` orders the claim rows."""

KUBELET_COUNTS: tuple[KubeletCounts, ...] = (CPU, MEMORY, NICS, DEVICES)
"""The kubelet's pools of one NUMA node (`integrations/kubernetes/state.py`), read in this order:
the order the Kubernetes door names resources in its answers (CPUs, memory, then devices)."""
FILLS: tuple[Fills[Any], ...] = (CPU, MEMORY)
"""The parts of `pack`'s host score (`engine/policies/`), in the order they are summed and said."""

__all__ = [
    "BLAME",
    "CLAIMS",
    "COUNT_CAPS",
    "COUNT_TAKES",
    "DECIDES",
    "EXPLAINS",
    "FILLS",
    "HOLDS_SHARES",
    "HOLDS_UNITS",
    "HOST_CHECKS",
    "KINDS",
    "KUBELET_COUNTS",
    "MODEL_DEMAND",
    "MODEL_LIMITS",
    "NODE_NEEDS",
    "RELAX_FINISH",
    "RELAX_HOSTS",
    "RELAX_NODES",
    "Kind",
    "implementing",
]
