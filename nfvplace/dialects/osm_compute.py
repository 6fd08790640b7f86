"""A VDU's CPUs and memory in the OSM IM and SOL006: the guest EPA, wherever it is written, and the
VM Descriptor it gives: shared vCPUs, or DEDICATED cpu-sets from the `numa-node-policy`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import (
    ASSUMED,
    MISSING,
    DialectError,
    Note,
    Page,
    as_mapping,
    one_of,
    page_size,
    parse_count,
    parse_int,
)
from .osm_numa import numa_cpu_sets

THREAD_POLICY = {
    "isolate": "isolate",
    "separate": "isolate",
    "avoid": "isolate",
    "prefer": "prefer",
    "require": "require",
}
PINNING_POLICIES = ("dedicated", "shared", "any")
PAGE_SIZES = ("large", "small", "size_2mb", "size_1gb", "prefer_large")
MEM_POLICIES = ("strict", "preferred")
DEFAULT_THREAD_POLICY = "prefer"
"""What OSM asks the VIM for when DEDICATED has no thread policy: Nova's default, `prefer`."""


def vdu_epa(
    vdu: Mapping[str, Any],
    vdu_path: PathKey,
    compute: Mapping[str, tuple[Mapping[str, Any], PathKey]],
) -> tuple[dict[str, Any], dict[str, PathKey], int | None, int | None, dict[str, PathKey]]:
    """The EPA items of a VDU, wherever they are, with their source paths and the sizes."""
    epa: dict[str, Any] = {}
    where: dict[str, PathKey] = {}
    sizes: dict[str, PathKey] = {}
    guest = vdu.get("guest-epa")
    if isinstance(guest, Mapping):
        for key, value in guest.items():
            epa[str(key)] = value
            where[str(key)] = (*vdu_path, "guest-epa", key)
    vcpus, memory = _flavor_sizes(as_mapping(vdu.get("vm-flavor")), vdu_path, epa, sizes)
    ref = vdu.get("virtual-compute-desc")
    if ref is not None and str(ref) in compute:
        desc, desc_path = compute[str(ref)]
        vcpus, memory = _compute_desc(desc, desc_path, (epa, where, sizes), vcpus, memory)
    elif ref is not None:
        raise DialectError(
            f"virtual-compute-desc '{ref}' is not defined in the VNFD",
            (*vdu_path, "virtual-compute-desc"),
        )
    return epa, where, vcpus, memory, sizes


def _flavor_sizes(
    flavor: Mapping[str, Any], vdu_path: PathKey, epa: dict[str, Any], sizes: dict[str, PathKey]
) -> tuple[int | None, int | None]:
    """OSM IM's `vm-flavor`: the vCPU count and memory (MiB); its storage goes to `epa`."""
    vcpus = memory = None
    at = (*vdu_path, "vm-flavor")
    if "vcpu-count" in flavor:
        vcpus = parse_count(flavor["vcpu-count"], "vcpu-count", (*at, "vcpu-count"))
        sizes["vcpus"] = (*at, "vcpu-count")
    if "storage-gb" in flavor:
        sizes["storage"] = (*at, "storage-gb")
        epa["storage-gb"] = parse_int(flavor["storage-gb"], "storage-gb", sizes["storage"])
    if "memory-mb" in flavor:
        memory = parse_int(flavor["memory-mb"], "memory-mb", (*at, "memory-mb"))
        sizes["memory"] = (*at, "memory-mb")
    return vcpus, memory


def _compute_desc(
    desc: Mapping[str, Any],
    desc_path: PathKey,
    found: tuple[dict[str, Any], dict[str, PathKey], dict[str, PathKey]],
    vcpus: int | None,
    memory: int | None,
) -> tuple[int | None, int | None]:
    """SOL006's `virtual-compute-desc` (with OSM's EPA augment): sizes over the flavor's, EPA
    items where the guest-epa does not say them. `found` is (epa, where, sizes), filled in."""
    epa, where, sizes = found
    cpu = as_mapping(desc.get("virtual-cpu"))
    mem = as_mapping(desc.get("virtual-memory"))
    if "num-virtual-cpu" in cpu:
        sizes["vcpus"] = (*desc_path, "virtual-cpu", "num-virtual-cpu")
        vcpus = parse_count(cpu["num-virtual-cpu"], "num-virtual-cpu", sizes["vcpus"])
    if "size" in mem:
        size_path = (*desc_path, "virtual-memory", "size")
        try:
            memory = round(float(mem["size"]) * 1024)
            sizes["memory-gb"] = size_path
        except (TypeError, ValueError):
            raise DialectError(
                f"virtual-memory size must be a number of GB, got {mem['size']!r}", size_path
            ) from None
        sizes["memory"] = size_path
    pinning = as_mapping(cpu.get("pinning"))
    if "policy" in pinning:
        policy = str(pinning["policy"]).lower()
        epa.setdefault("cpu-pinning-policy", "DEDICATED" if policy == "static" else "SHARED")
        where.setdefault("cpu-pinning-policy", (*desc_path, "virtual-cpu", "pinning", "policy"))
    if "thread-policy" in pinning:
        epa.setdefault("cpu-thread-pinning-policy", pinning["thread-policy"])
        where.setdefault(
            "cpu-thread-pinning-policy", (*desc_path, "virtual-cpu", "pinning", "thread-policy")
        )
    for key in ("mempage-size", "numa-node-policy"):
        if key in mem:
            epa.setdefault(key, mem[key])
            where.setdefault(key, (*desc_path, "virtual-memory", key))
    return vcpus, memory


def compute_vm(
    epa: Mapping[str, Any],
    where: Mapping[str, PathKey],
    found: tuple[int | None, int | None, Mapping[str, PathKey]],
    vdu_path: PathKey,
    out: dict[str, Any],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    """The VM's CPUs and memory into `out`: DEDICATED cpu-sets, or shared vCPUs. `found` is
    (vcpus, memory, sizes) as `vdu_epa` read them."""
    vcpus, memory, sizes = found

    def word(key: str, accepted: tuple[str, ...], default: str) -> str:
        return one_of(epa[key], accepted, key, where[key]) if key in epa else default

    policy = word("cpu-pinning-policy", PINNING_POLICIES, "any")
    page_word = word("mempage-size", PAGE_SIZES, "")
    page = page_size(page_word or None, where.get("mempage-size", vdu_path))
    thread_word = word("cpu-thread-pinning-policy", tuple(THREAD_POLICY), "")
    if policy == "dedicated":
        if memory is None or not dedicated_vm(
            epa, where, vcpus, memory, sizes, page, thread_word, out, origins, notes
        ):
            missing_sizes(vcpus, memory, vdu_path, notes)
    else:
        shared_vm(epa, where, (vcpus, memory, sizes), policy, page, vdu_path, out, origins, notes)


def missing_sizes(vcpus: int | None, memory: int | None, path: PathKey, notes: list[Note]) -> bool:
    for value, what in ((vcpus, "vCPU count"), (memory, "memory size")):
        if value is None:
            notes.append(
                Note(
                    path,
                    f"the VDU gives no {what} (vm-flavor or virtual-compute-desc)",
                    MISSING,
                )
            )
    return vcpus is None or memory is None


def shared_vm(
    epa: Mapping[str, Any],
    where: Mapping[str, PathKey],
    found: tuple[int | None, int | None, Mapping[str, PathKey]],
    policy: str,
    page: Page,
    vdu_path: PathKey,
    out: dict[str, Any],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    """A VDU whose vCPUs float: a plain VM, or floating cpu-sets when it says a NUMA layout or
    a page size (as OpenStack gives such a flavor a guest NUMA topology)."""
    vcpus, memory, sizes = found
    if missing_sizes(vcpus, memory, vdu_path, notes) or memory is None:
        return
    out.update({"vcpus": vcpus, "memory_mib": memory, "cpu_oversubscription": policy == "shared"})
    origins[("vcpus",)] = sizes["vcpus"]
    origins[("memory_mib",)] = sizes["memory"]
    if "cpu-thread-pinning-policy" in epa:
        notes.append(
            Note(
                where["cpu-thread-pinning-policy"],
                "cpu-thread-pinning-policy is not carried: floating vCPUs have no thread policy "
                "(it needs cpu-pinning-policy DEDICATED)",
            )
        )
    if "numa-node-policy" in epa or page:
        numa = as_mapping(epa.get("numa-node-policy"))
        numa_path = where.get("numa-node-policy", where.get("mempage-size", vdu_path))
        at = sizes.get("memory", numa_path)
        sets = numa_cpu_sets(numa, numa_path, vcpus, (memory, at), page, origins) or []
        for index, cpu_set in enumerate(sets):
            cpu_set["floating"] = True
            if cpu_set.pop("howtogroup", None):
                notes.append(
                    Note(
                        (*numa_path, "node", index),
                        "paired threads are not carried: the vCPUs float (cpu-pinning-policy "
                        "is not DEDICATED)",
                    )
                )
        if sets:
            out["cpu_sets"] = sets
            origins[("cpu_sets",)] = numa_path
            required = ["numa_memory_pinning"] + (["hugepage_numa_pinning"] if page else [])
            out["hypervisor"] = {"required_capabilities": required}


def dedicated_vm(
    epa: Mapping[str, Any],
    where: Mapping[str, PathKey],
    vcpus: int | None,
    memory: int,
    sizes: Mapping[str, PathKey],
    page: Page,
    thread_word: str,
    out: dict[str, Any],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> bool:
    """Cpu-sets for a DEDICATED VDU; False when the vCPU count is said nowhere."""
    numa = as_mapping(epa.get("numa-node-policy"))
    numa_path = where.get("numa-node-policy", where["cpu-pinning-policy"])
    memory_at = sizes.get("memory", numa_path)
    sets = numa_cpu_sets(numa, numa_path, vcpus, (memory, memory_at), page, origins)
    if sets is None:
        return False
    out["cpu_sets"] = sets
    origins[("cpu_sets",)] = numa_path
    out["hypervisor"] = {"required_capabilities": _required(numa, numa_path, page, notes)}
    origins[("hypervisor",)] = where["cpu-pinning-policy"]
    total = sum(len(cs["vcpus"]) for cs in sets)
    if vcpus is not None and total != vcpus:
        out["vcpus"] = vcpus
        origins[("vcpus",)] = sizes["vcpus"]
    if sum(cs["memory_mib"] for cs in sets) != memory:
        out["memory_mib"] = memory
        origins[("memory_mib",)] = sizes["memory"]
    out["cpu_thread_policy"] = THREAD_POLICY.get(thread_word, DEFAULT_THREAD_POLICY)
    if not thread_word:
        notes.append(
            Note(
                where["cpu-pinning-policy"],
                "DEDICATED without cpu-thread-pinning-policy: OpenStack's default 'prefer' is used",
                ASSUMED,
            )
        )
    else:
        origins[("cpu_thread_policy",)] = where["cpu-thread-pinning-policy"]
    return True


def _required(
    numa: Mapping[str, Any], numa_path: PathKey, page: Page, notes: list[Note]
) -> list[str]:
    """The hypervisor capabilities a DEDICATED VDU needs: pinning, NUMA memory pinning unless
    mem-policy is PREFERRED, and hugepage NUMA pinning with a page size."""
    required = ["cpu_pinning"]
    mem_policy = (
        one_of(numa["mem-policy"], MEM_POLICIES, "mem-policy", (*numa_path, "mem-policy"))
        if "mem-policy" in numa
        else "strict"
    )
    if mem_policy == "strict":
        required.append("numa_memory_pinning")
    else:
        notes.append(
            Note(
                (*numa_path, "mem-policy"),
                "mem-policy PREFERRED: the guest may take memory from other nodes; nfvplace "
                "still counts each cpu-set's memory on its own node, but does not require "
                "NUMA memory pinning from the hypervisor",
                ASSUMED,
            )
        )
    if page:
        required.append("hugepage_numa_pinning")
    return required
