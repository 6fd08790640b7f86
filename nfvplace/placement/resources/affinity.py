"""NUMA affinity of PCI devices and interfaces (Nova's PCI NUMA affinity policies), in the model.

A device or interface with a `numa_affinity` is near the nodes of its cpu-set, or of every cpu-set
when it names none: `required`/`legacy` only on such a node, `socket` on a node of the same socket
(the package of the node's PUs; a node without one is a socket of its own), `preferred` anywhere,
at a cost for each one off those nodes (`pci_remote`), so that a free local one wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from operator import is_not
from typing import Any

from ...models.chd import ComputeHostDescriptor, Cpu, NumaNode
from ...models.vmd import NumaAffinity
from .base import node_parts
from .model import ModelContext

REMOTE_COST = 1000  # a device or port off the VM's nodes (`preferred`): ten stranded threads
COST = "pci_remote"
COST_TEXT = "PCI devices and ports off the VM's NUMA nodes (preferred affinity, 1000 each)"
LOCAL = (None, NumaAffinity.required, NumaAffinity.legacy)


def sockets(host: ComputeHostDescriptor) -> tuple[int, ...]:
    """The socket of each node (by slot): its PUs' package, else a socket of its own."""
    return tuple(node_socket(node) for node in host.numa_nodes)


def sockets_again(
    host: ComputeHostDescriptor, before: ComputeHostDescriptor, sockets_before: tuple[int, ...]
) -> tuple[int, ...]:
    """`sockets` of `host`, a new version of `before`: a node's kept where its PUs are in the
    same packages."""
    return node_parts(
        host,
        before,
        sockets_before,
        lambda node, old, _socket: same_packages(node.cpus, old.cpus),
        lambda _slot, node: node_socket(node),
    )


def same_packages(cpus: Sequence[Cpu], before: Sequence[Cpu]) -> bool:
    """Whether two versions of a node's PUs are in the same packages, place by place: only the PUs
    that are not the same objects are compared (a claim changes a few PUs' state and owner)."""
    if len(cpus) != len(before):
        return False
    changed = compress(zip(cpus, before, strict=True), map(is_not, cpus, before))
    return all(new.package == old.package for new, old in changed)


def node_socket(node: NumaNode) -> int:
    packages = {cpu.package for cpu in node.cpus if cpu.package is not None}
    return packages.pop() if len(packages) == 1 else -1 - node.id


def near(
    ctx: ModelContext,
    cpu_set: int | None,
    affinity: NumaAffinity | None,
    node: int,
    node_sockets: tuple[int, ...],
) -> list[Any] | None:
    """The placement variables that make `node` near enough (None: every node is: no affinity
    and no cpu-set, or a VM without cpu-sets). An empty list: no cpu-set can make it near."""
    if (affinity is None and cpu_set is None) or not ctx.request.cpu_sets:
        return None
    sets = [cpu_set] if cpu_set is not None else [cs.id for cs in ctx.request.cpu_sets]
    nodes = [node]
    if affinity is NumaAffinity.socket:
        mine = node_sockets[ctx.free.slot(node)]
        nodes = [n for s, n in enumerate(ctx.free.node_ids) if node_sockets[s] == mine]
    found = (ctx.node_var(cs, n) for cs in sets for n in nodes)
    return [y for y in found if y is not None]


def post_locality(
    ctx: ModelContext, affinity: NumaAffinity | None, x: Any, near_vars: list[Any] | None
) -> None:
    """`x` (a device or port taken) near the VM's nodes: required, or (`preferred`) a cost."""
    if near_vars is None:
        return
    if affinity is not NumaAffinity.preferred:
        ctx.model.add(x <= sum(near_vars))
        return
    local = ctx.model.new_bool_var(f"{x.name}.local")
    ctx.model.add(local <= x)
    ctx.model.add(local <= sum(near_vars))
    ctx.cost(COST, REMOTE_COST * (x - local))
