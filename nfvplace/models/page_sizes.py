"""The hugepage sizes real processors have, per architecture, as Linux offers them.

From the kernel's documentation and its `arch_hugetlb_valid_size()`:
- x86_64: 2 MiB (PMD) and 1 GiB (PUD, the `pdpe1gb` flag).
- arm64 (Documentation/arch/arm64/hugetlbpage.rst), by base page size: 4K granule: 64K
  (contiguous PTE), 2M, 32M (contiguous PMD), 1G; 16K granule: 2M, 32M, 1G; 64K granule: 2M,
  512M, 16G.
- POWER (arch/powerpc/mm/hugetlbpage.c): radix MMU 2M and 1G; hash MMU 16M and 16G.
- s390x: 1M (segment) and 2G (region third).
- RISC-V 64: 2M, 1G, and 64K (Svnapot).
A size no processor has (3 MiB, 4 MiB on a 64-bit host) is a typo that no host can ever satisfy.
"""

from __future__ import annotations

from collections.abc import Mapping

KIB, MIB, GIB = 1, 1024, 1024 * 1024

PAGE_SIZES_KIB: Mapping[str, frozenset[int]] = {
    "x86_64": frozenset({2 * MIB, GIB}),
    "aarch64": frozenset({64 * KIB, 2 * MIB, 32 * MIB, 512 * MIB, GIB, 16 * GIB}),
    "ppc64le": frozenset({2 * MIB, 16 * MIB, GIB, 16 * GIB}),
    "s390x": frozenset({MIB, 2 * GIB}),
    "riscv64": frozenset({64 * KIB, 2 * MIB, GIB}),
}
# the names descriptors and tools use for each architecture (uname -m, Debian, Go, Kubernetes)
ALIASES = {
    "x86_64": "x86_64",
    "amd64": "x86_64",
    "x86-64": "x86_64",
    "x64": "x86_64",
    "aarch64": "aarch64",
    "arm64": "aarch64",
    "ppc64le": "ppc64le",
    "ppc64": "ppc64le",
    "ppc64el": "ppc64le",
    "powerpc64": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
}
ANY_PAGE_SIZE_KIB = frozenset().union(*PAGE_SIZES_KIB.values())


def page_sizes_kib(architecture: str | None) -> tuple[str | None, frozenset[int]]:
    """The architecture's canonical name and its page sizes; (None, every architecture's sizes)
    when it is not given or not one of those above."""
    name = ALIASES.get((architecture or "").strip().lower())
    return (name, PAGE_SIZES_KIB[name]) if name else (None, ANY_PAGE_SIZE_KIB)
