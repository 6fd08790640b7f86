"""Floating cpu-sets (`floating: true`): vCPUs unpinned on their node's shared PUs (NFV118-NFV120).

A floating cpu-set keeps its NUMA layout (memory, hugepages, interfaces on one node) but pins
nothing, so what only pinned vCPUs have is a contradiction, and so is a VM that pins some cpu-sets
and floats others (nfvplace has no mixed VMs: the two would draw on the same free PUs).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...models.vmd import EmulatorThreads, VmDescriptor
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "cpu"
CLAUSE = "8.2.2.4"

FLOATING_PINNED_FIELDS = Rule(
    "NFV118",
    Severity.error,
    FAMILY,
    "A floating cpu-set asks for what only pinned vCPUs have (howtogroup pairs, a thread policy, "
    "cache ways, realtime vCPUs)",
    "drop those fields, or pin the cpu-set ('floating: false')",
    CLAUSE,
)
FLOATING_MIXED = Rule(
    "NFV119",
    Severity.error,
    FAMILY,
    "Some cpu-sets float and others are pinned: nfvplace places a VM's vCPUs all pinned or all "
    "floating",
    "set 'floating' the same on every cpu-set",
    CLAUSE,
)
FLOATING_EMULATOR = Rule(
    "NFV120",
    Severity.error,
    FAMILY,
    "Isolated emulator threads need a dedicated PU, but the VM's cpu-sets float",
    "use 'emulator_threads: share' with floating cpu-sets (Nova refuses it too)",
    CLAUSE,
)
RULES = (FLOATING_PINNED_FIELDS, FLOATING_MIXED, FLOATING_EMULATOR)


def check_vmd(vm: VmDescriptor) -> Iterator[Hit]:
    floating = [cs for cs in vm.cpu_sets if cs.floating]
    if not floating:
        return
    realtime = set(vm.realtime_vcpus)
    for index, cs in enumerate(vm.cpu_sets):
        if not cs.floating:
            continue
        fields = [
            name for name in ("howtogroup", "thread_policy", "cache_ways") if getattr(cs, name)
        ]
        if realtime & set(cs.vcpus):
            fields.append("realtime_vcpus")
        if fields:
            yield FLOATING_PINNED_FIELDS.hit(
                ("cpu_sets", index, "floating"),
                f"cpu-set {cs.id} floats, yet sets {', '.join(fields)}",
            )
    if len(floating) < len(vm.cpu_sets):
        pinned = [cs.id for cs in vm.cpu_sets if not cs.floating]
        yield FLOATING_MIXED.hit(
            ("cpu_sets",),
            f"cpu-sets {[cs.id for cs in floating]} float, cpu-sets {pinned} are pinned",
        )
    if vm.emulator_threads is EmulatorThreads.isolate:
        yield FLOATING_EMULATOR.hit(
            ("emulator_threads",),
            f"emulator_threads is isolate, and {len(floating)} cpu-set(s) float",
        )
