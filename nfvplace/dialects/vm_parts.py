"""What every writer asks of a descriptor: a VM's size and its one page size, and what a
descriptor says that a target cannot."""

from __future__ import annotations

from pydantic import BaseModel

from ..models.vmd import Hugepages, Interface, VmDescriptor
from .base import DROPPED, Note, Page


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


def _page(pages: Hugepages) -> Page:
    return pages.choice.value if pages.choice is not None else pages.size_kib


def page_of(vm: VmDescriptor) -> Page:
    """The one page size of the VM's cpu-sets: KiB, `large`/`any`, or None (none, or several)."""
    pages = {_page(cs.hugepages) for cs in vm.cpu_sets if cs.hugepages is not None}
    return pages.pop() if len(pages) == 1 else None


def one_thread_policy(vm: VmDescriptor, target: str) -> list[Note]:
    """A note per cpu-set whose own thread policy differs from the VM's (`target` has one)."""
    return [
        Note(
            ("cpu_sets", index, "thread_policy"),
            f"not carried: {target} has one thread policy for all its vCPUs",
        )
        for index, cs in enumerate(vm.cpu_sets)
        if cs.thread_policy is not None and cs.thread_policy != vm.cpu_thread_policy
    ]


def one_page_size(vm: VmDescriptor, target: str) -> list[Note]:
    """`target` has one page size for all of the VM's memory: hugepages that cover part of a
    cpu-set's memory, or sizes that differ between cpu-sets, are not carried."""
    page = page_of(vm)
    notes = []
    for index, cs in enumerate(vm.cpu_sets):
        pages = cs.hugepages
        if page is None and pages is None:
            continue
        whole = pages is not None and (pages.choice or pages.total_mib == cs.memory_mib)
        if pages is None or _page(pages) != page or not whole:
            notes.append(
                Note(
                    ("cpu_sets", index, "hugepages"),
                    f"not carried: {target} backs all of its memory with one page size "
                    f"({'none' if page is None else _page_text(page)} written)",
                )
            )
    return notes


def _page_text(page: Page) -> str:
    return f"{page} KiB" if isinstance(page, int) else f"'{page}'"


def interface_affinity_notes(vm: VmDescriptor, target: str) -> list[Note]:
    """A note for each interface's `numa_affinity` (a Nova/Neutron policy `target` has no word
    for: read back, the interface stays on its cpu-set's node, or anywhere outside one)."""
    where: list[tuple[tuple[str | int, ...], Interface]] = [
        (("cpu_sets", k, "interfaces", j), i)
        for k, cs in enumerate(vm.cpu_sets)
        for j, i in enumerate(cs.interfaces)
    ]
    where += [(("interfaces", j), i) for j, i in enumerate(vm.interfaces)]
    return [
        Note(
            (*path, "numa_affinity"), f"not carried: {target} has no NUMA affinity policy", DROPPED
        )
        for path, i in where
        if i.numa_affinity is not None
    ]
