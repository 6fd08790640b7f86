"""A VM Descriptor as an OpenStack Nova flavor that Nova's API accepts (`POST /flavors` and
`POST /flavors/{id}/os-extra_specs`, microversion 2.86, where every extra spec is validated).

What the VM asks is written in the form Nova applies, or named in a note:

- vCPUs: a VM without cpu-sets `shared` when it may be oversubscribed, else `dedicated` (one
  node, as nfvplace pins it); pinned cpu-sets `hw:cpu_policy=dedicated`, floating ones `shared`
  (a guest NUMA topology); one guest NUMA node per cpu-set. One
  `hw:cpu_thread_policy` for the flavor: the cpu-sets' own policies when they agree (else the
  strictest, with a note); `require` when every vCPU is in a howtogroup pair.
- `hw:cpu_realtime_mask` as Nova's parser reads it (`^0-1`, see `nova_traits`); the emulator
  threads then run on the housekeeping vCPUs' PUs, as the VM Descriptor's `share` means.
- CPU flags as the traits Nova's libvirt driver reports (`nova_traits.CPU_TRAITS`); others, the
  processor model and frequency, cache ways, and what only a host aggregate can say, as notes.
- `disk` (the root disk, whole GiB) and `OS-FLV-EXT-DATA:ephemeral` (one more local disk).
"""

from __future__ import annotations

import math
from typing import Any

from ..models.vmd import CpuSet, Disk, ThreadPolicy, VmDescriptor
from .base import ASSUMED, Note
from .nova_traits import cpu_ranges, flag_trait, mask_text
from .vm_parts import not_said, one_page_size, page_of, vm_size

TARGET = "a Nova flavor"
LARGE_KIB = 2048  # `large`: Nova's smallest large page
STRICTEST = (ThreadPolicy.isolate, ThreadPolicy.require, ThreadPolicy.prefer)
ISOLATE_ON_SMT = (
    "hw:cpu_thread_policy=isolate: Nova asks Placement for hosts without SMT (trait "
    "HW_CPU_HYPERTHREADING forbidden, Launchpad bug #1889633), so the flavor boots only on "
    "hosts with SMT off, although whole cores of SMT hosts would do; for SMT hosts, give the "
    "VM 'prefer' or 'require' (every vCPU in a howtogroup pair), or keep isolate flavors on an "
    "aggregate of hosts with SMT off"
)

ALL_REALTIME = (
    "written 'isolate': every vCPU is realtime, and Nova refuses hw:cpu_realtime without a "
    "non-realtime vCPU for the emulator threads unless they have a PCPU of their own (one more "
    "dedicated PU than the VM Descriptor asks)"
)


def to_nova(vm: VmDescriptor) -> tuple[dict[str, Any], list[Note]]:
    vcpus, memory = vm_size(vm)
    specs: dict[str, str] = {}
    notes: list[Note] = []
    said = {"vcpus", "memory_mib", "cpu_oversubscription", "storage", "emulator_threads"}
    if vm.cpu_sets:
        said |= {"cpu_sets", "cpu_thread_policy", "hypervisor", "realtime_vcpus"}
        _cpu_specs(vm, specs, notes)
    elif not vm.cpu_oversubscription:
        # nfvplace pins such a plain VM on one NUMA node, as Nova pins a dedicated flavor
        said.add("cpu_thread_policy")
        specs["hw:cpu_policy"] = "dedicated"
        explicit = "cpu_thread_policy" in vm.model_fields_set
        policy = vm.cpu_thread_policy if explicit else ThreadPolicy.prefer
        specs["hw:cpu_thread_policy"] = policy.value
        if specs["hw:cpu_thread_policy"] == "isolate":
            notes.append(Note(("cpu_thread_policy",), ISOLATE_ON_SMT, ASSUMED))
    if vm.realtime_vcpus:
        specs["hw:cpu_realtime"] = "yes"
        others = [v for v in range(vcpus) if v not in vm.realtime_vcpus]
        if others:  # the emulator threads run on these vCPUs' PUs (policy share)
            specs["hw:cpu_realtime_mask"] = mask_text(others)
        elif vm.emulator_threads.value == "share":
            specs["hw:emulator_threads_policy"] = "isolate"
            notes.append(Note(("emulator_threads",), ALL_REALTIME, ASSUMED))
    if vm.emulator_threads.value == "isolate":
        specs["hw:emulator_threads_policy"] = "isolate"
    if vm.processor is not None:
        said.add("processor")
        notes += _processor(vm, specs)
    if vm.cpu_sets:
        memory = sum(int(specs[f"hw:numa_mem.{i}"]) for i in range(len(vm.cpu_sets)))
    flavor: dict[str, Any] = {"name": vm.name, "vcpus": vcpus, "ram": memory}
    notes += _disks(vm.storage, flavor)
    flavor["extra_specs"] = specs
    notes = not_said(vm, TARGET, said) + notes
    notes += _cpu_set_notes(vm, specs) + one_page_size(vm, TARGET)
    return {"flavor": flavor}, notes


def _cpu_specs(vm: VmDescriptor, specs: dict[str, str], notes: list[Note]) -> None:
    pinned = [cs for cs in vm.cpu_sets if not cs.floating]
    # a shared flavor with a NUMA topology, or pinned (lint refuses floating beside pinned)
    specs["hw:cpu_policy"] = "dedicated" if pinned else "shared"
    if pinned:
        specs["hw:cpu_thread_policy"] = _thread_policy(vm, pinned, notes)
        if specs["hw:cpu_thread_policy"] == "isolate":
            notes.append(Note(("cpu_thread_policy",), ISOLATE_ON_SMT, ASSUMED))
    page = page_of(vm)
    if page:
        specs["hw:mem_page_size"] = str(page)
    # Nova fits a guest node only in whole pages: round up to the next one, no further
    page_mib = max(
        1, (page if isinstance(page, int) else LARGE_KIB if page == "large" else 0) // 1024
    )
    specs["hw:numa_nodes"] = str(len(vm.cpu_sets))
    for index, cs in enumerate(vm.cpu_sets):
        memory = -(-cs.memory_mib // page_mib) * page_mib
        specs[f"hw:numa_cpus.{index}"] = cpu_ranges(list(cs.vcpus))
        specs[f"hw:numa_mem.{index}"] = str(memory)
        if memory != cs.memory_mib:
            notes.append(
                Note(
                    ("cpu_sets", index, "memory_mib"),
                    f"{cs.memory_mib} MiB written as {memory} MiB, the next whole number of "
                    f"{page_mib} MiB pages: Nova backs a guest node with whole pages",
                    ASSUMED,
                )
            )


def _policy_of(vm: VmDescriptor, cs: CpuSet) -> ThreadPolicy:
    return cs.thread_policy or vm.cpu_thread_policy


def _thread_policy(vm: VmDescriptor, pinned: list[CpuSet], notes: list[Note]) -> str:
    """The flavor's one thread policy: `require` when every pinned vCPU is in a howtogroup pair
    (Nova puts vCPUs on sibling threads only then), else the cpu-sets' own policy, or the
    strictest of them."""
    asked = {_policy_of(vm, cs) for cs in pinned}
    if all(not cs.single_vcpus for cs in pinned):
        if ThreadPolicy.prefer in asked:  # isolate with no unpaired vCPU is require already
            notes.append(
                Note(
                    ("cpu_thread_policy",),
                    "thread policy 'prefer' written as 'require': every vCPU is in a howtogroup "
                    "pair, and Nova keeps pairs on sibling threads only under require",
                    ASSUMED,
                )
            )
        return ThreadPolicy.require.value
    chosen = next(p for p in STRICTEST if p in asked)
    if len(asked) > 1:
        notes.append(
            Note(
                ("cpu_sets",),
                f"cpu-sets ask thread policies {sorted(p.value for p in asked)}; Nova has one "
                f"hw:cpu_thread_policy per flavor: written the strictest, {chosen.value}",
                ASSUMED,
            )
        )
    return chosen.value


def _cpu_set_notes(vm: VmDescriptor, specs: dict[str, str]) -> list[Note]:
    notes = []
    for index, cs in enumerate(vm.cpu_sets):
        if cs.interfaces:
            notes.append(
                Note(
                    ("cpu_sets", index, "interfaces"),
                    "not carried: interfaces are Neutron ports (vnic_type direct or "
                    "direct-physical), not part of a Nova flavor",
                )
            )
        if cs.howtogroup and specs.get("hw:cpu_thread_policy") != "require":
            notes.append(
                Note(
                    ("cpu_sets", index, "howtogroup"),
                    "not carried: Nova pairs vCPUs on sibling threads only with thread policy "
                    "require",
                )
            )
        if cs.cache_ways:
            notes.append(
                Note(
                    ("cpu_sets", index, "cache_ways"),
                    f"not carried: {cs.cache_ways} L3 cache ways (Intel RDT CAT) are no Nova "
                    "flavor extra spec; Nova's libvirt driver reserves no cache for a guest",
                )
            )
        if cs.memory_bandwidth_gbps:
            notes.append(
                Note(
                    ("cpu_sets", index, "memory_bandwidth_gbps"),
                    "not carried: Nova cannot reserve memory bandwidth",
                )
            )
    return notes


def _processor(vm: VmDescriptor, specs: dict[str, str]) -> list[Note]:
    """CPU flags as traits the libvirt driver reports; the rest of the processor as notes."""
    processor = vm.processor
    assert processor is not None
    notes = []
    missing = []
    for flag in processor.required_flags:
        trait = flag_trait(flag)
        if trait is None:
            missing.append(flag)
        else:
            specs[f"trait:{trait}"] = "required"
    if missing:
        notes.append(
            Note(
                ("processor", "required_flags"),
                f"CPU flags {missing} not carried: Nova's libvirt driver reports no trait for "
                "them (a trait os-traits lacks is refused by the API, one no host reports finds "
                "no valid host); keep the VM on a host aggregate whose hosts have them",
            )
        )
    others = [
        name
        for name in ("vendor", "model", "compatible_models", "min_frequency_mhz", "architecture")
        if getattr(processor, name)
    ]
    if others:
        notes.append(
            Note(
                ("processor",),
                f"processor {others} not carried: a flavor cannot ask for a processor model, "
                "vendor or frequency; use a host aggregate (AggregateInstanceExtraSpecsFilter)",
            )
        )
    return notes


def _disks(storage: tuple[Disk, ...], flavor: dict[str, Any]) -> list[Note]:
    """`disk` is the root disk (the one named root, else the first), `OS-FLV-EXT-DATA:ephemeral`
    the next; both whole GiB, as Nova's API wants them."""
    indexed = list(enumerate(storage))
    roots = [(i, d) for i, d in indexed if d.name == "root"] or indexed[:1]
    rest = [(i, d) for i, d in indexed if (i, d) not in roots[:1]]
    notes: list[Note] = []
    flavor["disk"] = _gib(*roots[0], notes) if roots else 0
    if rest:
        flavor["OS-FLV-EXT-DATA:ephemeral"] = _gib(*rest[0], notes)
    for index, disk in rest[1:]:
        notes.append(
            Note(
                ("storage", index),
                f"disk {disk.name!r} not carried: a flavor has one root and one ephemeral disk; "
                "attach it as a Cinder volume (block device mapping) at boot",
            )
        )
    for index, disk in indexed:
        if disk.dedicated or disk.type.value != "ssd":
            notes.append(
                Note(
                    ("storage", index),
                    f"disk {disk.name!r}: its type ({disk.type.value}) and dedication are not "
                    "carried: a flavor's disks are on the host's ephemeral storage",
                )
            )
    return notes


def _gib(index: int, disk: Disk, notes: list[Note]) -> int:
    size = math.ceil(disk.size_gib)
    if size != disk.size_gib:
        notes.append(
            Note(
                ("storage", index, "size_gib"),
                f"{disk.size_gib} GiB written as {size}: Nova's flavor disks are whole GiB",
                ASSUMED,
            )
        )
    return size
