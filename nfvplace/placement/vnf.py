"""Placing a VNF template: every member, `count` instances each, all or nothing.

Members are placed in template order, instance by instance, each on the availability left by the ones
before (a working copy of the fleet; the caller's is untouched). Anti-affinity groups keep every
instance of their members on distinct hosts; a link with `locality: same_host` puts its endpoints'
members on the host of the first one placed, `different_host` keeps them apart. If any instance finds
no host, the result carries that instance's diagnosis and no configuration at all. The order is
greedy (no backtracking across members); a template that only fits in another order is reported as not
fitting, with the member that failed named in the summary.
"""

from __future__ import annotations

import numpy as np

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vnf import Locality, VnfTemplate
from .engine import place_vm
from .explain import Reasons
from .index import BoolArray, FleetIndex
from .options import Options
from .result import Diagnosis, PlacementResult, Rejection


def place_vnf(fleet: FleetIndex, template: VnfTemplate, options: Options) -> PlacementResult:
    work = fleet.copy()
    hosts_of: dict[str, list[int]] = {}
    configurations: list[VmConfiguration] = []
    updated: dict[str, ComputeHostDescriptor] = {}
    explanation: list[str] = []
    for member in template.members:
        vm = member.descriptor
        if vm is None:  # loading resolves `file`; a bare model without it cannot be placed
            from .. import errors
            from ..errors import DescriptorError, Issue

            raise DescriptorError(
                errors.INPUT_REFERENCE,
                f"VNF member {member.name} has no descriptor (file {member.file} not resolved)",
                issues=(
                    Issue("load the template with nfvplace.load", path=f"members.{member.name}"),
                ),
            )
        for k in range(member.count):
            consider, excluded = _consider(work, template, member.name, hosts_of)
            reasons = Reasons()
            for phrase, hosts in excluded.items():
                reasons.add(phrase, len(hosts), _excluded_builder(work, hosts, phrase))
            instance = f"{template.name}.{member.name}-{k + 1}"
            if options.instance:  # a prefix naming this placement (the service's placement id)
                instance = f"{options.instance}/{instance}"
            outcome = place_vm(
                work, vm, options, consider=consider, reasons=reasons, instance=instance
            )
            if outcome.configuration is None or outcome.host is None:
                diagnosis = reasons.diagnosis(len(work), 0)
                prefix = (
                    f"VNF {template.name}: member {member.name} instance {k + 1}/{member.count} "
                    f"does not fit ({len(configurations)} instances placed before it, all "
                    "released); "
                )
                return PlacementResult(
                    diagnosis=Diagnosis(
                        diagnosis.hosts_considered,
                        0,
                        diagnosis.rejections,
                        prefix + diagnosis.summary,
                    )
                )
            configurations.append(outcome.configuration)
            updated[outcome.host.id] = outcome.host
            work.update(outcome.host)
            hosts_of.setdefault(member.name, []).append(work.index[outcome.host.id])
            if options.explain:
                explanation.append(f"{instance} -> {outcome.host.id}")
                explanation.extend(f"  {line}" for line in outcome.explanation)
    return PlacementResult(
        configurations=tuple(configurations), hosts=updated, explanation=tuple(explanation)
    )


def _consider(
    fleet: FleetIndex, template: VnfTemplate, member: str, hosts_of: dict[str, list[int]]
) -> tuple[BoolArray, dict[str, list[int]]]:
    consider: BoolArray = np.ones(len(fleet), dtype=np.bool_)
    excluded: dict[str, list[int]] = {}

    def exclude(mask: BoolArray, phrase: str) -> None:
        hit = consider & mask
        if hit.any():
            excluded.setdefault(phrase, []).extend(np.flatnonzero(hit).tolist())
            consider[hit] = False

    for group in template.anti_affinity:
        if member not in group.members:
            continue
        mask = np.zeros(len(fleet), dtype=np.bool_)
        for other in group.members:
            mask[hosts_of.get(other, [])] = True
        exclude(mask, "already host a member of the same anti-affinity group")
    for link in template.links:
        ends = {e.member for e in link.endpoints}
        if member not in ends or link.locality is Locality.any:
            continue
        others = [m for m in ends if m != member and hosts_of.get(m)]
        if not others:
            continue
        mask = np.zeros(len(fleet), dtype=np.bool_)
        for other in others:
            mask[hosts_of[other]] = True
        if link.locality is Locality.same_host:
            exclude(~mask, f"are not the host of link {link.name}'s other end (same_host)")
        else:
            exclude(mask, f"host the other end of link {link.name} (different_host)")
    return consider, excluded


def _excluded_builder(fleet: FleetIndex, hosts: list[int], phrase: str):  # type: ignore[no-untyped-def]
    def build() -> list[Rejection]:
        return [Rejection(fleet.host_ids[i], "affinity", phrase, phrase) for i in hosts]

    return build
