"""What every writer asks of a descriptor: a VM's size and its one page size, and what a
descriptor says that a target cannot."""

from __future__ import annotations

from pydantic import BaseModel

from ..models.vmd import VmDescriptor
from .base import DROPPED, Note


def not_said(descriptor: BaseModel, target: str, said: set[str]) -> list[Note]:
    """A note for every field the descriptor sets that `target` has no word for."""
    data = descriptor.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return [
        Note((key,), f"'{key}' is not carried: {target} has no equivalent", DROPPED)
        for key in data
        if key not in said and key not in ("schema", "name", "description")
    ]


def vm_size(vm: VmDescriptor) -> tuple[int, int]:
    vcpus = vm.vcpus or sum(len(cs.vcpus) for cs in vm.cpu_sets)
    memory = vm.memory_mib or sum(cs.memory_mib for cs in vm.cpu_sets)
    return vcpus, memory


def page_kib(vm: VmDescriptor) -> int | None:
    pages = {cs.hugepages.size_kib for cs in vm.cpu_sets if cs.hugepages is not None}
    return pages.pop() if len(pages) == 1 else None
