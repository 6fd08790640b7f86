"""The exact model of one request on one candidate host (OR-Tools CP-SAT, one worker).

Variables are named after what they mean (`place[cs0->n1]`, `iso_whole[cs0n1]`,
`port[eth1->0000:af:00.0]`) so a solution prints itself. Cpu-set placement and the counts of each class
of free core per node are decided here; the exact PU and VF ids are chosen afterwards (`assign.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from .constraints import bandwidth, cpu, devices, emulator, memory, nics
from .constraints.base import ModelContext
from .hostview import HostView
from .options import Options, Policy
from .policies import node_cost
from .request import Request


class _Model(cp_model.CpModel):
    """CpModel without the pre-PEP 8 aliases that `CpModel.__init__` adds to every instance (about
    1 ms per model, as much as solving one of these small models)."""

    def __init__(self) -> None:
        cp_model.cmh.CpBaseModel.__init__(self, None)  # type: ignore[attr-defined]


@dataclass
class Layout:
    """A solved placement on one host: nodes per cpu-set, counts per class, port per interface."""

    host: str
    nodes: dict[int, int]
    counts: dict[tuple[str, int, int], int] = field(default_factory=dict)
    ports: dict[str, str] = field(default_factory=dict)
    devices: tuple[tuple[int, str, int], ...] = ()  # (request index, pci address, node)
    objective: float = 0.0
    costs: dict[str, int] = field(default_factory=dict)  # objective by kind (COSTS)
    optimal: bool = True


@dataclass(frozen=True)
class SolveFailure:
    host: str
    status: str  # "infeasible" or "timeout"


def solve(
    view: HostView,
    request: Request,
    allowed: dict[int, set[int]],
    options: Options,
    skip: frozenset[str] = frozenset(),
) -> Layout | SolveFailure:
    """Solve; `skip` leaves constraint families out (used to name the family that blocks)."""
    model = _Model()
    ctx = ModelContext(model=model, request=request, view=view, options=options)
    needs_ports = {
        cs.id: any(i.mode.value != "vswitch" for i in request.interfaces_of(cs.id))
        for cs in request.cpu_sets
    }
    for cs in request.cpu_sets:
        choices = []
        for node in view.nodes:
            if node.id in allowed.get(cs.id, set()):
                var = model.new_bool_var(f"place[cs{cs.id}->n{node.id}]")
                ctx.place[(cs.id, node.id)] = var
                choices.append(var)
                ctx.cost("node", node_cost(node, cs, options, needs_ports[cs.id]) * var)
        if not choices:
            return SolveFailure(view.id, "infeasible")
        model.add_exactly_one(choices)
    if request.distinct_nodes and len(request.cpu_sets) > 1 and "numa" not in skip:
        for node in view.nodes:
            here = [
                ctx.place[(cs.id, node.id)]
                for cs in request.cpu_sets
                if (cs.id, node.id) in ctx.place
            ]
            if len(here) > 1:
                model.add_at_most_one(here)
    for cs in request.cpu_sets:
        cpu.post(ctx, cs)
    emulator.post(ctx)
    if "cpu" not in skip:
        cpu.post_capacity(ctx)
    if "memory" not in skip:
        memory.post(ctx)
    if "interfaces" not in skip:
        nics.post(ctx, spread=options.policy is Policy.spread)
    if "devices" not in skip:
        devices.post(ctx)
    if "interconnect" not in skip:
        bandwidth.post(ctx)
    if ctx.objective:
        model.minimize(sum(t for terms in ctx.objective.values() for t in terms))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = options.seed
    solver.parameters.max_time_in_seconds = options.time_limit_s
    # these models have tens of variables: presolve and LP relaxations cost more than they save
    # (same optimum, proved; about half the time per solve)
    solver.parameters.cp_model_presolve = False
    solver.parameters.linearization_level = 0
    status = solver.solve(model)
    if status == cp_model.INFEASIBLE or status == cp_model.MODEL_INVALID:
        return SolveFailure(view.id, "infeasible")
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return SolveFailure(view.id, "timeout")
    nodes = {
        cs_id: node_id for (cs_id, node_id), var in ctx.place.items() if solver.boolean_value(var)
    }
    counts = {key: int(solver.value(var)) for key, var in ctx.counts.items()}
    ports = {
        name: address for (name, address), var in ctx.ports.items() if solver.boolean_value(var)
    }
    chosen = tuple(sorted(key for key, var in ctx.devices.items() if solver.boolean_value(var)))
    return Layout(
        host=view.id,
        nodes=nodes,
        counts=counts,
        ports=ports,
        devices=chosen,
        objective=solver.objective_value if ctx.objective else 0.0,
        costs={k: int(solver.value(sum(terms))) for k, terms in ctx.objective.items()},
        optimal=status == cp_model.OPTIMAL,
    )


FAMILIES = {
    "interfaces": "ports and VFs (a port given whole serves no VF; VFs share its bandwidth; "
    "paced VFs carry at most their rate; a NIC's ports share its PCIe link)",
    "devices": "PCI devices (a device serves one request)",
    "interconnect": "bandwidth of the NUMA interconnect between the cpu-sets",
    "memory": "hugepages and memory of the nodes shared by the cpu-sets",
    "cpu": "free cores of the nodes shared by the cpu-sets and the emulator PU",
    "numa": "distinct NUMA nodes for the cpu-sets",
}


def blame(
    view: HostView, request: Request, allowed: dict[int, set[int]], options: Options
) -> str | None:
    """The constraint family whose removal makes an infeasible model feasible (first in order)."""
    for family in FAMILIES:
        if not isinstance(
            solve(view, request, allowed, options, frozenset({family})), SolveFailure
        ):
            return family
    return None
