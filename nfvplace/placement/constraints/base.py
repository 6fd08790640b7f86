"""Shared shapes of the constraint families: host checks, node needs, the CP-SAT model context."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from ortools.sat.python import cp_model

from ..hostview import HostView
from ..index import BoolArray, FleetIndex
from ..options import Options
from ..request import Request

Detail = Callable[[int], tuple[str, float | None, float | None]]
"""host index -> (message with numbers, requested, available)."""


@dataclass(frozen=True, slots=True)
class HostCheck:
    """A host-level condition over the fleet: `failing[i]` says host i does not meet it."""

    code: str
    summary: str  # phrase for the one-line summary, e.g. "lack CPU flags avx512f"
    failing: BoolArray
    detail: Detail


@dataclass(frozen=True, slots=True)
class NodeNeed:
    """A per-node condition of one cpu-set: `ok[i, j]` says node slot j of host i meets it."""

    code: str
    phrase: str  # "4 free 1 GiB pages"
    ok: BoolArray
    available: npt.NDArray[np.float64] | npt.NDArray[np.int64]
    requested: float
    unit: str  # how `available` reads: "free 1 GiB pages"


@dataclass(frozen=True, slots=True)
class FilterInput:
    fleet: FleetIndex
    request: Request
    options: Options


COSTS = {
    "stranded": "threads left stranded: an idle sibling kept for an isolated vCPU or a pair, or a core "
    "left half used (100 each)",
    "node": "fit of the chosen NUMA nodes under the policy (pack: percent of free threads plus percent "
    "of free normal memory of each node, lower is fuller; spread: minus its free threads; "
    "least-fragmentation: free threads left beyond the cpu-set), plus 100 per usable port on a node "
    "whose cpu-set needs none",
    "ports": "spare Gbps of the chosen ports (dedicated: speed beyond what is asked; SR-IOV: "
    "bandwidth left on each port the VM's VFs use, negated under spread), plus the Gbps left on a "
    "port whose last free VF is taken",
    "distance": "NUMA distance between the nodes of every two cpu-sets (20 per unit of SLIT distance "
    "above 10)",
}


def always_ok(fleet: FleetIndex) -> BoolArray:
    return np.zeros(len(fleet), dtype=np.bool_)


@dataclass
class ModelContext:
    """The CP-SAT model of one request on one host, built by the families in turn."""

    model: cp_model.CpModel
    request: Request
    view: HostView
    options: Options
    # place[(cpu_set, node)]: the cpu-set sits on that node
    place: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    # usage terms per node and pool, summed against the pool size at the end
    use: dict[tuple[int, str], list[cp_model.LinearExprT]] = field(default_factory=dict)
    # objective terms by what they measure (COSTS), summed and minimised
    objective: dict[str, list[cp_model.LinearExprT]] = field(default_factory=dict)
    # variables the PU / port assignment reads back, by name
    counts: dict[tuple[str, int, int], cp_model.IntVar] = field(default_factory=dict)
    ports: dict[tuple[str, str], cp_model.IntVar] = field(default_factory=dict)
    links: dict[tuple[int, int, int, int], cp_model.IntVar] = field(default_factory=dict)
    # devices[(request index, pci address, node)]: the request takes that device
    devices: dict[tuple[int, str, int], cp_model.IntVar] = field(default_factory=dict)

    def add_use(self, node: int, pool: str, term: cp_model.LinearExprT) -> None:
        self.use.setdefault((node, pool), []).append(term)

    def cost(self, kind: str, term: cp_model.LinearExprT) -> None:
        """Add `term` to the objective under `kind` (a key of COSTS)."""
        self.objective.setdefault(kind, []).append(term)

    def placed(self, cpu_set: int, node: int) -> cp_model.IntVar | None:
        return self.place.get((cpu_set, node))


def detail(fn: Callable[..., tuple[str, float | None, float | None]]) -> Detail:
    """Type a message lambda that binds its values through default arguments."""
    return fn
