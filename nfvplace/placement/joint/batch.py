"""What a joint placement places: a VNF template or a batch of VM Descriptors, as members and units.

A *member* is one VM Descriptor with a count (a VNF member, or one batch item); a *unit* is one
instance of a member. A batch is a VNF without links or anti-affinity whose members are named after
their VM Descriptors (`name`, `name-2`, ... when a descriptor is given twice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ... import errors
from ...errors import DescriptorError, Issue
from ...models.vmd import VmDescriptor
from ...models.vnf import AntiAffinityScope, Locality, VnfTemplate
from ..request import build_request


@dataclass(frozen=True, slots=True)
class BatchItem:
    """`count` instances of `vm` (one item of `{"batch": [{"vm": VMD, "count": k}, ...]}`)."""

    vm: VmDescriptor
    count: int = 1


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    vm: VmDescriptor
    count: int
    size: int  # threads + 1 GiB pages / 4 + 2 per NIC interface: larger members are searched first


@dataclass(frozen=True, slots=True)
class Link:
    name: str
    members: frozenset[str]
    locality: Locality
    bandwidth_gbps: float


@dataclass(frozen=True, slots=True)
class Apart:
    members: frozenset[str]
    scope: AntiAffinityScope


@dataclass(frozen=True, slots=True)
class Unit:
    member: Member
    k: int  # 0-based instance number
    instance: str | None  # instance id; None: the engine's `<vm>@<host>-<k>`

    @property
    def label(self) -> str:
        return f"member {self.member.name} instance {self.k + 1}/{self.member.count}"


@dataclass(frozen=True, slots=True)
class Group:
    """A VNF template or a batch, normalised for the search."""

    name: str | None  # the VNF's name; None for a batch
    members: tuple[Member, ...]
    links: tuple[Link, ...] = ()
    apart: tuple[Apart, ...] = ()

    @property
    def title(self) -> str:
        return f"VNF {self.name}" if self.name else "batch"

    def units(self, owner: str | None = None) -> list[Unit]:
        """One unit per instance; with `owner` (e.g. the service's placement id) every instance id
        is `<owner>/<vnf>.<member>-<k>` (`<owner>/<member>-<k>` in a batch)."""
        prefix = f"{self.name}." if self.name else None
        if owner:
            prefix = f"{owner}/{prefix or ''}"
        return [
            Unit(m, k, f"{prefix}{m.name}-{k + 1}" if prefix else None)
            for m in self.members
            for k in range(m.count)
        ]


def _size(vm: VmDescriptor) -> int:
    request = build_request(vm)
    threads = sum(len(cs.pairs) * 2 + len(cs.singles) for cs in request.cpu_sets)
    if request.shared is not None:
        threads += max(request.shared.vcpus // 4, 1)
    pages = sum(cs.hugepage_mib for cs in request.cpu_sets) // 1024
    nics = sum(1 for i in request.interfaces if i.mode.value != "vswitch")
    return threads + int(request.emulator) + pages // 4 + 2 * nics


def of_template(template: VnfTemplate) -> Group:
    members = []
    for member in template.members:
        vm = member.descriptor
        if vm is None:  # loading resolves `file`; a bare model without it cannot be placed
            raise DescriptorError(
                errors.INPUT_REFERENCE,
                f"VNF member {member.name} has no descriptor (file {member.file} not resolved)",
                issues=(
                    Issue("load the template with nfvplace.load", path=f"members.{member.name}"),
                ),
            )
        members.append(Member(member.name, vm, member.count, _size(vm)))
    links = tuple(
        Link(
            link.name,
            frozenset(e.member for e in link.endpoints),
            link.locality,
            float(link.bandwidth_gbps or 0.0),
        )
        for link in template.links
    )
    apart = tuple(Apart(frozenset(g.members), g.scope) for g in template.anti_affinity)
    return Group(template.name, tuple(members), links, apart)


def of_batch(items: Sequence[BatchItem | VmDescriptor]) -> Group:
    members: list[Member] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        entry = item if isinstance(item, BatchItem) else BatchItem(item)
        if not isinstance(entry.vm, VmDescriptor):
            raise DescriptorError(
                errors.INPUT_INVALID,
                f"batch[{index}] is a {type(entry.vm).__name__}, not a VM Descriptor",
                issues=(
                    Issue("give VmDescriptor objects (nfvplace.load)", path=f"batch[{index}]"),
                ),
            )
        if isinstance(entry.count, bool) or not isinstance(entry.count, int) or entry.count < 1:
            raise DescriptorError(
                errors.INPUT_INVALID,
                f"batch[{index}].count must be a positive integer, got {entry.count!r}",
                issues=(Issue("e.g. count: 2", path=f"batch[{index}].count"),),
            )
        name = entry.vm.name
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}-{seen[name]}"
        members.append(Member(name, entry.vm, entry.count, _size(entry.vm)))
    if not members:
        raise DescriptorError(
            errors.INPUT_INVALID,
            "the batch is empty",
            issues=(Issue("give at least one VM Descriptor", path="batch"),),
        )
    return Group(None, tuple(members))
