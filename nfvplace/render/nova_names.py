"""Nova's names for what a flavor asks of a host: os-traits for CPU flags, page size spellings."""

from __future__ import annotations

from ._common import page_size_name

# /proc/cpuinfo flag -> os-traits name (HW_CPU_X86_*), for the flags whose trait name differs.
_FLAG_TRAITS: dict[str, str] = {
    "aes": "AESNI",
    "pclmulqdq": "CLMUL",
    "fma": "FMA3",
    "sse4_1": "SSE41",
    "sse4_2": "SSE42",
    "sse4a": "SSE4A",
    "abm": "ABM",
    "avx512vbmi": "AVX512VBMI",
    "avx512_vbmi2": "AVX512VBMI2",
    "avx512_vnni": "AVX512VNNI",
    "avx512_bitalg": "AVX512BITALG",
    "avx512_vpopcntdq": "AVX512VPOPCNTDQ",
    "gfni": "AVX512GFNI",
    "vaes": "AVX512VAES",
    "vpclmulqdq": "AVX512VPCLMULQDQ",
    "svm": "SVM",
    "vmx": "VMX",
}
_SAME_NAME_FLAGS = frozenset(
    {
        "avx",
        "avx2",
        "f16c",
        "fma4",
        "mmx",
        "sse",
        "sse2",
        "sse3",
        "ssse3",
        "bmi",
        "bmi1",
        "bmi2",
        "tbm",
        "sha",
        "sha_ni",
        "mpx",
        "sgx",
        "xop",
        "avx512f",
        "avx512cd",
        "avx512pf",
        "avx512er",
        "avx512dq",
        "avx512bw",
        "avx512vl",
        "avx512ifma",
    }
)


def cpu_flag_trait(flag: str) -> str | None:
    """The os-traits name for an x86 CPU flag, or None when there is none we know of."""
    flag = flag.lower()
    if flag in _FLAG_TRAITS:
        return f"HW_CPU_X86_{_FLAG_TRAITS[flag]}"
    if flag in _SAME_NAME_FLAGS:
        name = {"bmi1": "BMI", "sha_ni": "SHA", "sse3": "SSE3"}.get(flag, flag)
        return f"HW_CPU_X86_{name.upper()}"
    return None


def nova_page_size(size_kib: int) -> str:
    """1048576 -> `1GB`, 2048 -> `2MB` (Nova's `hw:mem_page_size` spelling)."""
    return f"{page_size_name(size_kib)}B"
