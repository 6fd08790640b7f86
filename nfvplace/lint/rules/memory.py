"""Memory and hugepage rules for VM Descriptors and hosts (clauses 8.1.1.4, 8.2.2.4) (NFV201-NFV219)."""

from __future__ import annotations

from collections.abc import Iterator

from ...models.chd import ComputeHostDescriptor
from ...models.page_sizes import page_sizes_kib
from ...models.units import format_memory_kib
from ...models.vmd import PageSizeChoice, VmDescriptor
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "memory"


HUGEPAGES_EXCEED_MEMORY = Rule(
    "NFV201",
    Severity.error,
    FAMILY,
    "A cpu-set's hugepages (count x size) exceed its memory_mib",
    "raise the cpu-set's memory_mib to at least count x size, or use fewer pages",
    "8.2.2.4",
)
MEMORY_COUNT_MISMATCH = Rule(
    "NFV202",
    Severity.error,
    FAMILY,
    "The top-level 'memory_mib' differs from the sum of the cpu-sets' memory",
    "drop the top-level 'memory_mib' (it is derived) or make it equal to the cpu-sets' sum",
    "8.2.2.4",
)
UNUSUAL_PAGE_SIZE = Rule(
    "NFV203",
    Severity.error,
    FAMILY,
    "The hugepage size is one no processor has (of the architecture given, else of any: "
    "x86_64 2MiB 1GiB; aarch64 64KiB 2MiB 32MiB 512MiB 1GiB 16GiB; ppc64le 2MiB 16MiB 1GiB "
    "16GiB; s390x 1MiB 2GiB; riscv64 64KiB 2MiB 1GiB)",
    "use 2MiB or 1GiB on x86_64 (the sizes of the processor's architecture elsewhere)",
    "8.2.2.4",
)
ZERO_MEMORY = Rule(
    "NFV204",
    Severity.error,
    FAMILY,
    "A VM or cpu-set asks for no memory at all",
    "give memory_mib a positive size",
    "8.2.2.4",
)
HUGEPAGES_OVERSUBSCRIBED = Rule(
    "NFV205",
    Severity.warning,
    FAMILY,
    "Memory oversubscription is allowed, but hugepages can never be oversubscribed",
    "drop 'memory_oversubscription' for a VM backed by hugepages",
    "8.2.2.4",
)
ZERO_HUGEPAGES = Rule(
    "NFV206",
    Severity.warning,
    FAMILY,
    "A cpu-set declares hugepages with count 0",
    "remove 'hugepages' or give the number of pages",
    "8.2.2.4",
)
LARGE_PAGES_ODD_MEMORY = Rule(
    "NFV207",
    Severity.warning,
    FAMILY,
    "Hugepages of size 'large' for a memory that is not a whole number of 2 MiB: no large page "
    "size of x86_64 holds it",
    "give memory_mib in multiples of 2 MiB (of 1024 MiB for 1 GiB pages)",
    "8.2.2.4",
)
HOST_HUGEPAGES_USED = Rule(
    "NFV210",
    Severity.error,
    FAMILY,
    "A host hugepage pool has more pages used than configured",
    "make 'used' at most 'total' (rediscover the host if in doubt)",
    "8.1.1.4",
)
HOST_HUGEPAGES_EXCEED = Rule(
    "NFV211",
    Severity.error,
    FAMILY,
    "A NUMA node's hugepage pools hold more memory than the node has",
    "hugepage pools are carved out of total_mib: lower the pools or raise total_mib",
    "8.1.1.4",
)
HOST_NORMAL_OVERUSED = Rule(
    "NFV212",
    Severity.error,
    FAMILY,
    "A NUMA node's normal memory has more used than it can give (after reserve and ratio)",
    "lower 'normal.used_mib' or 'normal.reserved_mib', or raise the oversubscription ratio",
    "8.1.1.4",
)
HOST_POOL_DUPLICATE = Rule(
    "NFV213",
    Severity.error,
    FAMILY,
    "A NUMA node lists two hugepage pools of the same page size",
    "merge them into one pool per size",
    "8.1.1.4",
)
HOST_RATIO_BELOW_ONE = Rule(
    "NFV214",
    Severity.error,
    FAMILY,
    "A node's normal-memory oversubscription ratio is below 1",
    "use 1.0 for strictly assigned memory, or a ratio above 1 to oversubscribe",
    "8.1.1.4",
)
HOST_MEMORY_BW_OVERUSED = Rule(
    "NFV215",
    Severity.error,
    FAMILY,
    "A NUMA node uses more memory bandwidth than it has",
    "make bandwidth_used_gbps at most bandwidth_gbps",
    "8.1.1.4",
)

RULES = (
    HUGEPAGES_EXCEED_MEMORY,
    MEMORY_COUNT_MISMATCH,
    UNUSUAL_PAGE_SIZE,
    ZERO_MEMORY,
    HUGEPAGES_OVERSUBSCRIBED,
    ZERO_HUGEPAGES,
    HOST_HUGEPAGES_USED,
    HOST_HUGEPAGES_EXCEED,
    HOST_NORMAL_OVERUSED,
    LARGE_PAGES_ODD_MEMORY,
    HOST_POOL_DUPLICATE,
    HOST_RATIO_BELOW_ONE,
    HOST_MEMORY_BW_OVERUSED,
)


def _sizes_fix(arch: str | None, sizes: frozenset[int]) -> str:
    named = ", ".join(format_memory_kib(s) for s in sorted(sizes))
    return f"use one of {named}" + (f" ({arch})" if arch else " (the processor's architecture)")


def check_vmd(vm: VmDescriptor) -> Iterator[Hit]:
    uses_hugepages = False
    arch, sizes = page_sizes_kib(vm.processor.architecture if vm.processor else None)
    for index, cs in enumerate(vm.cpu_sets):
        if cs.memory_mib == 0:
            yield ZERO_MEMORY.hit(("cpu_sets", index, "memory_mib"), f"cpu-set {cs.id} has 0 MiB")
        pages = cs.hugepages
        if pages is None:
            continue
        if pages.choice is not None:
            uses_hugepages = uses_hugepages or pages.choice is PageSizeChoice.large
            if pages.choice is PageSizeChoice.large and cs.memory_mib % 2:
                yield LARGE_PAGES_ODD_MEMORY.hit(
                    ("cpu_sets", index, "hugepages", "size"),
                    f"cpu-set {cs.id} has {cs.memory_mib} MiB, not a whole number of 2 MiB pages",
                )
            continue
        size = pages.size_kib or 1  # a given size (the model has it when no word is given)
        uses_hugepages = uses_hugepages or pages.pages > 0
        if pages.pages == 0:
            yield ZERO_HUGEPAGES.hit(
                ("cpu_sets", index, "hugepages", "count"),
                f"cpu-set {cs.id} declares {format_memory_kib(size)} pages but count is 0",
            )
        if size not in sizes:
            yield UNUSUAL_PAGE_SIZE.hit(
                ("cpu_sets", index, "hugepages", "size"),
                f"page size {format_memory_kib(size)} is one no {arch or 'processor'} has",
                _sizes_fix(arch, sizes),
            )
        huge_kib = pages.pages * size
        if huge_kib > cs.memory_mib * 1024:
            yield HUGEPAGES_EXCEED_MEMORY.hit(
                ("cpu_sets", index, "hugepages"),
                f"{pages.pages} x {format_memory_kib(size)} = {huge_kib // 1024} MiB of "
                f"hugepages, more than the cpu-set's memory_mib {cs.memory_mib}",
                f"raise memory_mib to at least {-(-huge_kib // 1024)}, or use at most "
                f"{cs.memory_mib * 1024 // size} pages",
            )
    if vm.cpu_sets and vm.memory_mib is not None:
        total = sum(cs.memory_mib for cs in vm.cpu_sets)
        if total != vm.memory_mib:
            yield MEMORY_COUNT_MISMATCH.hit(
                ("memory_mib",),
                f"memory_mib is {vm.memory_mib} but the cpu-sets hold {total} MiB",
            )
    if not vm.cpu_sets and vm.memory_mib == 0:
        yield ZERO_MEMORY.hit(("memory_mib",), "the VM asks for 0 MiB")
    if uses_hugepages and vm.memory_oversubscription:
        yield HUGEPAGES_OVERSUBSCRIBED.hit(
            ("memory_oversubscription",),
            "memory_oversubscription is true but the cpu-sets are backed by hugepages",
        )


def check_chd(host: ComputeHostDescriptor) -> Iterator[Hit]:
    arch, offered = page_sizes_kib(host.processor.architecture)
    for n, node in enumerate(host.numa_nodes):
        memory = node.memory
        base = ("numa_nodes", n, "memory")
        sizes: dict[int, int] = {}
        for p, pool in enumerate(memory.hugepages):
            where = (*base, "hugepages", p)
            size = format_memory_kib(pool.size_kib)
            if pool.size_kib in sizes:
                yield HOST_POOL_DUPLICATE.hit(
                    where,
                    f"node {node.id} has two {size} pools (hugepages[{sizes[pool.size_kib]}])",
                )
            else:
                sizes[pool.size_kib] = p
            if pool.used > pool.total:
                yield HOST_HUGEPAGES_USED.hit(
                    (*where, "used"),
                    f"node {node.id}: {pool.used} of {pool.total} {size} pages used",
                )
            if pool.size_kib not in offered:
                yield UNUSUAL_PAGE_SIZE.hit(
                    (*where, "size_kib"),
                    f"node {node.id}: page size {size} is one no {arch or 'processor'} has",
                    _sizes_fix(arch, offered),
                )
        if memory.hugepage_mib > memory.total_mib:
            yield HOST_HUGEPAGES_EXCEED.hit(
                (*base, "hugepages"),
                f"node {node.id}: pools hold {memory.hugepage_mib} MiB but total_mib is "
                f"{memory.total_mib}",
            )
        normal = memory.normal
        if normal.oversubscription_ratio < 1:
            yield HOST_RATIO_BELOW_ONE.hit(
                (*base, "normal", "oversubscription_ratio"),
                f"node {node.id}: ratio {normal.oversubscription_ratio} is below 1",
            )
        else:
            capacity = int(
                max(memory.normal_total_mib - normal.reserved_mib, 0)
                * normal.oversubscription_ratio
            )
            if normal.used_mib > capacity:
                yield HOST_NORMAL_OVERUSED.hit(
                    (*base, "normal", "used_mib"),
                    f"node {node.id}: {normal.used_mib} MiB used, but only {capacity} MiB can be "
                    f"given ({memory.normal_total_mib} MiB normal - {normal.reserved_mib} reserved,"
                    f" x {normal.oversubscription_ratio})",
                )
        if memory.bandwidth_gbps is not None and memory.bandwidth_used_gbps > memory.bandwidth_gbps:
            yield HOST_MEMORY_BW_OVERUSED.hit(
                (*base, "bandwidth_used_gbps"),
                f"node {node.id}: {memory.bandwidth_used_gbps:g} Gbps used of "
                f"{memory.bandwidth_gbps:g}",
            )
