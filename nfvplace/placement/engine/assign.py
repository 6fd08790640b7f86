"""Exact ids after the solve: every kind assigns its part of the VM Configuration (PUs, pages,
ports and VFs, devices, ...) from the values it kept, into one draft validated once. The result is
a VM Configuration that `claims.claim` accepts."""

from __future__ import annotations

from collections.abc import Container

from ...models.configuration import VmConfiguration
from ...models.vmd import VmDescriptor
from ..request import Request
from ..resources import implementing
from ..resources.base import HostFree
from ..resources.draft import ConfigurationDraft
from ..resources.kind import Decisions
from ..resources.model import Layout
from ..resources.stages import Assigns

_ASSIGNS = implementing(Assigns)  # each writes its own keys of the draft: any order


def instance_id(host: str, taken: Container[str], request: Request, given: str | None) -> str:
    """The given id, or `<vm>@<host>-<k>` with the smallest k not `taken` (the ids of the host's
    instances, claims pending included): unique in a fleet."""
    if given:
        return given
    k = 1
    while f"{request.name}@{host}-{k}" in taken:
        k += 1
    return f"{request.name}@{host}-{k}"


def build_configuration(
    host: str,
    free: HostFree,
    request: Request,
    layout: Layout | None,
    instance: str,
    decisions: Decisions,
) -> VmConfiguration:
    vm = request.vm
    nodes = layout.nodes if layout else {}
    draft = ConfigurationDraft(
        fields={
            "vm": vm.name,
            "instance": instance,
            "host": host,
            "vcpus": vm.total_vcpus,
            "memory_mib": vm.total_memory_mib,
            "realtime_vcpus": vm.realtime_vcpus,
            "variant": request.variant,
        },
        cpu_sets={cs.id: {"id": cs.id, "numa_node": nodes[cs.id]} for cs in request.cpu_sets},
    )
    for kind in _ASSIGNS:
        kind.assign(draft, free, request, layout, decisions)
    _requirements(draft, vm)
    return draft.build()  # validated once


def _requirements(draft: ConfigurationDraft, vm: VmDescriptor) -> None:
    """Every requirement of `vm` (the descriptor placed, its variant applied) that deploying
    needs, written into the draft: each cpu-set's own thread policy, each interface's network and
    VLAN, and the descriptor itself."""
    policies = {cs.id: cs.thread_policy for cs in vm.cpu_sets}
    for cs_id, entry in draft.cpu_sets.items():
        entry["thread_policy"] = policies.get(cs_id)
    described = {i.name: i for i in vm.all_interfaces}
    for entry in draft.fields.get("interfaces", ()):
        iface = described.get(entry["name"])
        if iface is not None:
            entry.update(physical_network=iface.physical_network, vlan=iface.vlan)
    draft.fields["descriptor"] = vm
