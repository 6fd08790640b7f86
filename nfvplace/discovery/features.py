"""Processor features of NFV-PER 001 clause 8.1.1.1, derived from /proc/cpuinfo flags.

A documented table, not a guess: a feature is listed when one of its flags is present. Linux hides
`vmx`/`svm` when the BIOS disables virtualisation, so a listed flag means present and enabled.
Features no flag shows (cache tagging, IOTLB sizes, direct cache access on AMD) stay unknown.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..models.capabilities import ProcessorFeature

# feature -> flags of which any one shows it (cpuinfo `flags`, and `vmx flags` on Intel, kernel >= 5.8)
FEATURE_FLAGS: Final[dict[ProcessorFeature, tuple[str, ...]]] = {
    ProcessorFeature.hw_virtualization: ("vmx", "svm"),
    ProcessorFeature.slat: ("ept", "npt"),
    ProcessorFeature.slat_large_pages: ("ept_1gb",),
    ProcessorFeature.large_pages: ("pse", "pdpe1gb"),
    ProcessorFeature.tlb_large_pages: ("pdpe1gb",),
    ProcessorFeature.tlb_tagging: ("vpid", "svm"),  # VPID; every AMD-V CPU tags TLBs with ASIDs
    ProcessorFeature.vm_exit_reduction: ("apicv", "posted_intr", "avic", "flexpriority"),
    ProcessorFeature.direct_cache_access: ("dca",),
}

# Features no cpuinfo flag can show; discovery reports them as unknown unless sysfs tells (IOMMU).
NOT_IN_FLAGS: Final[tuple[ProcessorFeature, ...]] = (
    ProcessorFeature.io_large_pages,
    ProcessorFeature.iotlb_large_pages,
    ProcessorFeature.cache_tagging,
)


def features_from_flags(
    flags: Iterable[str], vmx_flags: Iterable[str] = (), *, smt_active: bool = False
) -> tuple[ProcessorFeature, ...]:
    """Features present (and enabled) according to the flags, in table order."""
    present = set(flags) | set(vmx_flags)
    out = [feature for feature, names in FEATURE_FLAGS.items() if present & set(names)]
    # AMD NPT maps 1 GiB guest pages whenever the CPU has 1 GiB pages at all.
    if ProcessorFeature.slat_large_pages not in out and "npt" in present and "pdpe1gb" in present:
        out.append(ProcessorFeature.slat_large_pages)
    if smt_active:
        out.append(ProcessorFeature.smt)
    return tuple(out)
