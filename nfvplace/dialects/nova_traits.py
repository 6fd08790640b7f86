"""The CPU flags a Nova flavor can require, and Nova's parsers of vCPU masks.

- A CPU flag (the kernel's `/proc/cpuinfo` name, as in a VM Descriptor) is required of a host by
  the os-traits trait that Nova's libvirt driver reports for it (`CPU_TRAITS_MAPPING` in
  `nova/virt/libvirt/utils.py`, keyed by libvirt's feature names). A flag with no such trait
  (`pdpe1gb`, `constant_tsc`, `ht`, `lm`...) cannot be asked of Nova by a flavor: a trait that
  os-traits lacks is refused by the API, and one no host reports finds no valid host.
  `tests/dialects/test_nova_flavors.py` checks the table against Nova's own mapping.
- `hw:cpu_realtime_mask` and `hw:cpu_dedicated_mask` as Nova reads them
  (`nova.virt.hardware.get_realtime_cpu_constraint`): a mask that starts with `^` is
  `parse_cpu_spec("0-<vcpus-1>," + mask)`, so `^0,1` excludes vCPU 0 and then adds vCPU 1 again
  (write `^0-1`); any other mask is the set itself.
"""

from __future__ import annotations

from ..models.loading import PathKey
from .base import DialectError, parse_cpu_list

# kernel flag -> the trait Nova's libvirt driver reports for it (for `svm` and `vmx` it reports
# two: the vendor's name is written, and both are read)
CPU_TRAITS: dict[str, str] = {
    "3dnow": "HW_CPU_X86_3DNOW",
    "abm": "HW_CPU_X86_ABM",
    "aes": "HW_CPU_X86_AESNI",
    "amx_bf16": "HW_CPU_X86_AMXBF16",
    "amx_int8": "HW_CPU_X86_AMXINT8",
    "amx_tile": "HW_CPU_X86_AMXTILE",
    "avx": "HW_CPU_X86_AVX",
    "avx2": "HW_CPU_X86_AVX2",
    "avx512bw": "HW_CPU_X86_AVX512BW",
    "avx512cd": "HW_CPU_X86_AVX512CD",
    "avx512dq": "HW_CPU_X86_AVX512DQ",
    "avx512er": "HW_CPU_X86_AVX512ER",
    "avx512f": "HW_CPU_X86_AVX512F",
    "avx512pf": "HW_CPU_X86_AVX512PF",
    "avx512vl": "HW_CPU_X86_AVX512VL",
    "avx512_vnni": "HW_CPU_X86_AVX512VNNI",
    "avx512vbmi": "HW_CPU_X86_AVX512VBMI",
    "avx512ifma": "HW_CPU_X86_AVX512IFMA",
    "avx512_vbmi2": "HW_CPU_X86_AVX512VBMI2",
    "avx512_bitalg": "HW_CPU_X86_AVX512BITALG",
    "vaes": "HW_CPU_X86_AVX512VAES",
    "gfni": "HW_CPU_X86_AVX512GFNI",
    "vpclmulqdq": "HW_CPU_X86_AVX512VPCLMULQDQ",
    "avx512_vpopcntdq": "HW_CPU_X86_AVX512VPOPCNTDQ",
    "bmi1": "HW_CPU_X86_BMI",
    "bmi2": "HW_CPU_X86_BMI2",
    "pclmulqdq": "HW_CPU_X86_CLMUL",
    "f16c": "HW_CPU_X86_F16C",
    "fma": "HW_CPU_X86_FMA3",
    "fma4": "HW_CPU_X86_FMA4",
    "mmx": "HW_CPU_X86_MMX",
    "mpx": "HW_CPU_X86_MPX",
    "sha_ni": "HW_CPU_X86_SHA",
    "sse": "HW_CPU_X86_SSE",
    "sse2": "HW_CPU_X86_SSE2",
    "sse4_1": "HW_CPU_X86_SSE41",
    "sse4_2": "HW_CPU_X86_SSE42",
    "sse4a": "HW_CPU_X86_SSE4A",
    "ssse3": "HW_CPU_X86_SSSE3",
    "svm": "HW_CPU_X86_AMD_SVM",
    "tbm": "HW_CPU_X86_TBM",
    "vmx": "HW_CPU_X86_INTEL_VMX",
    "xop": "HW_CPU_X86_XOP",
}
# Nova's mapping keys SSE3 by `sse3`, a name libvirt's cpu_map spells `pni` (the kernel's too):
# a host reports the trait only when libvirt says `sse3`, so it is read but never written
TRAIT_FLAGS: dict[str, str] = {
    **{trait: flag for flag, trait in CPU_TRAITS.items()},
    "HW_CPU_X86_SVM": "svm",
    "HW_CPU_X86_VMX": "vmx",
    "HW_CPU_X86_SSE3": "pni",
}
# notes of the flavor reader (`openstack`) where Nova means something particular
HOST_WIDE = (
    "a shared flavor without a guest NUMA topology: Nova floats its vCPUs over all of the "
    "host's shared CPUs and takes its memory from the whole host; read as floating vCPUs, which "
    "nfvplace keeps on one NUMA node's shared PUs (the Nova door shows the service each host as "
    "one node for such a flavor, as Nova counts it)"
)
UNREPORTED = (
    "trait {trait}: Nova's libvirt driver reports no such trait, so in Nova no host has it "
    "(No valid host); read as the CPU flag '{flag}'"
)
FLAG_SPELLINGS = {"sse3": "pni", "sha": "sha_ni", "bmi": "bmi1"}


def flag_trait(flag: str) -> str | None:
    """The trait Nova's libvirt driver reports for a kernel CPU flag, or None."""
    name = flag.strip().lower()
    return CPU_TRAITS.get(FLAG_SPELLINGS.get(name, name))


def nova_cpu_mask(mask: str, vcpus: int, what: str, where: PathKey) -> list[int]:
    """The vCPUs a `hw:cpu_realtime_mask` / `hw:cpu_dedicated_mask` names, as Nova reads it."""
    text = mask.strip()
    spec = f"0-{vcpus - 1},{text}" if text.startswith("^") else text
    chosen = sorted(set(parse_cpu_list(spec, what, where)))
    if not chosen:
        raise DialectError(f"{what}={mask!r} leaves no vCPU; Nova refuses such a flavor", where)
    outside = [v for v in chosen if v >= vcpus]
    if outside:
        raise DialectError(
            f"{what}={mask!r} names vCPUs {outside} beyond the flavor's {vcpus}; Nova refuses it",
            where,
        )
    return chosen


def mask_text(others: list[int]) -> str:
    """The vCPUs a mask leaves out, each range behind its own `^` (`^0-1,^4`): the form Nova reads
    as written (in `^0,1` or `^0-1,4` the later items add vCPUs back)."""
    return ",".join(f"^{span}" for span in cpu_ranges(others).split(","))


def cpu_ranges(ids: list[int]) -> str:
    """`[0, 1, 2, 5]` -> `0-2,5`."""
    ordered = sorted(set(ids))
    spans: list[str] = []
    for value in ordered:
        if spans and value == int(spans[-1].split("-")[-1]) + 1:
            spans[-1] = f"{spans[-1].split('-')[0]}-{value}"
        else:
            spans.append(str(value))
    return ",".join(spans)
