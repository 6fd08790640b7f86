"""CPU flag names between libvirt (what Nova's `cpu_info` and its CPU traits speak) and the Linux
kernel (`/proc/cpuinfo`, what nfvplace's descriptors and hwloc discovery speak).

libvirt names x86 features in its own `cpu_map` (`x86_features.xml`): most are the kernel's name,
but some use a dot or a dash where the kernel writes an underscore (`sse4.2` / `sse4_2`,
`sha-ni` / `sha_ni`, `amx-bf16` / `amx_bf16`), and a few are other words (`pclmuldq` /
`pclmulqdq`, `tsc-deadline` / `tsc_deadline_timer`, `cmt` / `cqm`, `invtsc` / `constant_tsc`
and `nonstop_tsc`). The table lists every name that differs; any other name is the same in both.

Standard library only: the scheduler filter imports it in Nova's environment.
"""

from __future__ import annotations

from collections.abc import Iterable

# libvirt feature -> the kernel's flag(s) for it; the names not listed are the same in both
LIBVIRT_TO_KERNEL: dict[str, tuple[str, ...]] = {
    "pclmuldq": ("pclmulqdq",),
    "sse4.1": ("sse4_1",),
    "sse4.2": ("sse4_2",),
    "tsc-deadline": ("tsc_deadline_timer",),
    "cmt": ("cqm",),
    "sha-ni": ("sha_ni",),
    "intel-pt": ("intel_pt",),
    "avx512vbmi2": ("avx512_vbmi2",),
    "avx512vnni": ("avx512_vnni",),
    "avx512bitalg": ("avx512_bitalg",),
    "avx512-vpopcntdq": ("avx512_vpopcntdq",),
    "avx512-4vnniw": ("avx512_4vnniw",),
    "avx512-4fmaps": ("avx512_4fmaps",),
    "avx512-vp2intersect": ("avx512_vp2intersect",),
    "avx512-fp16": ("avx512_fp16",),
    "avx512-bf16": ("avx512_bf16",),
    "avx-vnni": ("avx_vnni",),
    "md-clear": ("md_clear",),
    "tsx-ldtrk": ("tsxldtrk",),
    "arch-lbr": ("arch_lbr",),
    "arch-capabilities": ("arch_capabilities",),
    "amx-bf16": ("amx_bf16",),
    "amx-tile": ("amx_tile",),
    "amx-int8": ("amx_int8",),
    "bus-lock-detect": ("bus_lock_detect",),
    "split-lock-detect": ("split_lock_detect",),
    "invtsc": ("constant_tsc", "nonstop_tsc"),
    "sgxlc": ("sgx_lc",),
    "amd-ssbd": ("amd_ssbd",),
    "virt-ssbd": ("virt_ssbd",),
    "svm-lock": ("svm_lock",),
    "nrip-save": ("nrip_save",),
    "tsc-scale": ("tsc_scale",),
    "vmcb-clean": ("vmcb_clean",),
    "pause-filter": ("pause_filter",),
    "v-vmsave-vmload": ("v_vmsave_vmload",),
    "svme-addr-chk": ("svme_addr_chk",),
}
KERNEL_TO_LIBVIRT: dict[str, str] = {
    kernel: libvirt for libvirt, names in LIBVIRT_TO_KERNEL.items() for kernel in names
}


def kernel_flags(features: Iterable[str]) -> list[str]:
    """The kernel's names of libvirt's CPU features (a host's `cpu_info` `features`), sorted."""
    out: set[str] = set()
    for feature in features:
        name = str(feature).strip().lower()
        out.update(LIBVIRT_TO_KERNEL.get(name, (name,)))
    return sorted(out)


def libvirt_feature(flag: str) -> str:
    """libvirt's name of a kernel CPU flag (`sse4_2` -> `sse4.2`)."""
    name = flag.strip().lower()
    return KERNEL_TO_LIBVIRT.get(name, name)
