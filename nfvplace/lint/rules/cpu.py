"""vCPU and cpu-set rules of a VM Descriptor (NFV-PER 001 clause 8.2.2.4) (NFV101-NFV119)."""

from __future__ import annotations

from collections.abc import Iterator

from ...models.vmd import ThreadPolicy, VmDescriptor
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "cpu"
CLAUSE = "8.2.2.4"

VCPU_DUPLICATE = Rule(
    "NFV101",
    Severity.error,
    FAMILY,
    "A vCPU id appears more than once across the cpu-sets",
    "give every vCPU one id, listed in exactly one cpu-set",
    CLAUSE,
)
PAIR_OUTSIDE_SET = Rule(
    "NFV102",
    Severity.error,
    FAMILY,
    "A howtogroup pair names a vCPU that is not in the same cpu-set",
    "pair only vCPUs listed in the cpu-set's own 'vcpus'",
    CLAUSE,
)
PAIR_REUSED = Rule(
    "NFV103",
    Severity.error,
    FAMILY,
    "A vCPU appears in more than one howtogroup pair, or a pair names the same vCPU twice",
    "put each vCPU in at most one pair, and pair two different vCPUs",
    CLAUSE,
)
VCPU_IDS_GAP = Rule(
    "NFV104",
    Severity.warning,
    FAMILY,
    "The vCPU ids are not 0..N-1 (guests number their vCPUs contiguously)",
    "renumber the vCPUs 0..N-1",
    CLAUSE,
)
VCPU_COUNT_MISMATCH = Rule(
    "NFV105",
    Severity.error,
    FAMILY,
    "The top-level 'vcpus' differs from the number of vCPUs in the cpu-sets",
    "drop the top-level 'vcpus' (it is derived) or make it equal to the cpu-sets' total",
    CLAUSE,
)
REALTIME_UNKNOWN = Rule(
    "NFV106",
    Severity.error,
    FAMILY,
    "A realtime vCPU is not a vCPU of the VM",
    "list in 'realtime_vcpus' only ids that appear in a cpu-set (or below 'vcpus')",
    CLAUSE,
)
REQUIRE_UNPAIRED = Rule(
    "NFV107",
    Severity.info,
    FAMILY,
    "Thread policy 'require' with unpaired vCPUs: placement pairs them in order (an odd one out "
    "takes a thread of a whole core and leaves its siblings free)",
    "list the pairs in 'howtogroup' to choose them yourself",
    CLAUSE,
)
REALTIME_SHARED = Rule(
    "NFV108",
    Severity.error,
    FAMILY,
    "Realtime vCPUs need dedicated PUs, but the VM allows CPU oversubscription",
    "set 'cpu_oversubscription: false', or drop 'realtime_vcpus'",
    CLAUSE,
)
PINNED_OVERSUBSCRIBED = Rule(
    "NFV109",
    Severity.warning,
    FAMILY,
    "The VM has cpu-sets (pinned vCPUs) and also allows CPU oversubscription",
    "cpu-sets are placed on dedicated PUs; drop 'cpu_oversubscription' or the cpu-sets",
    CLAUSE,
)
CPU_SET_DUPLICATE = Rule(
    "NFV110",
    Severity.error,
    FAMILY,
    "Two cpu-sets have the same id",
    "number the cpu-sets 0, 1, 2, ...",
    CLAUSE,
)
BANDWIDTH_UNKNOWN_SET = Rule(
    "NFV111",
    Severity.error,
    FAMILY,
    "A cpu_set_bandwidth entry names a cpu-set that does not exist",
    "name two ids from 'cpu_sets'",
    CLAUSE,
)
BANDWIDTH_SAME_SET = Rule(
    "NFV112",
    Severity.error,
    FAMILY,
    "A cpu_set_bandwidth entry names the same cpu-set twice",
    "name two different cpu-sets; bandwidth inside a set needs no entry",
    CLAUSE,
)
BANDWIDTH_DUPLICATE = Rule(
    "NFV113",
    Severity.warning,
    FAMILY,
    "Two cpu_set_bandwidth entries name the same pair of cpu-sets",
    "merge them into one entry with the total bandwidth",
    CLAUSE,
)
EMULATOR_SHARED = Rule(
    "NFV114",
    Severity.warning,
    FAMILY,
    "Isolated emulator threads need a dedicated PU, but the VM has no cpu-sets to pin",
    "use 'emulator_threads: share' for a VM without cpu-sets",
    CLAUSE,
)
REALTIME_ALL = Rule(
    "NFV115",
    Severity.warning,
    FAMILY,
    "Every vCPU is realtime: nothing is left for the guest's housekeeping (non-RT) threads",
    "keep at least one vCPU out of 'realtime_vcpus' for the guest OS",
    CLAUSE,
)

REALTIME_PAIRED = Rule(
    "NFV116",
    Severity.info,
    FAMILY,
    "A realtime vCPU shares its core with another vCPU (howtogroup pair)",
    "leave realtime vCPUs unpaired so that each gets a whole isolated core (seeds 000, 001)",
    CLAUSE,
)
REALTIME_SIBLING_SHARED = Rule(
    "NFV117",
    Severity.warning,
    FAMILY,
    "An unpaired realtime vCPU's core may be shared with other VMs (thread policy 'prefer')",
    "use thread policy 'isolate' for cpu-sets holding realtime vCPUs",
    CLAUSE,
)

RULES = (
    VCPU_DUPLICATE,
    PAIR_OUTSIDE_SET,
    PAIR_REUSED,
    VCPU_IDS_GAP,
    VCPU_COUNT_MISMATCH,
    REALTIME_UNKNOWN,
    REQUIRE_UNPAIRED,
    REALTIME_SHARED,
    PINNED_OVERSUBSCRIBED,
    CPU_SET_DUPLICATE,
    BANDWIDTH_UNKNOWN_SET,
    BANDWIDTH_SAME_SET,
    BANDWIDTH_DUPLICATE,
    EMULATOR_SHARED,
    REALTIME_ALL,
    REALTIME_PAIRED,
    REALTIME_SIBLING_SHARED,
)


def _vcpu_ids(vm: VmDescriptor) -> set[int] | range:
    """The VM's vCPU ids; a range (never materialised) for a plain VM, whatever its size."""
    if vm.cpu_sets:
        return {v for cs in vm.cpu_sets for v in cs.vcpus}
    return range(vm.vcpus or 0)


def check_vmd(vm: VmDescriptor) -> Iterator[Hit]:
    yield from _check_sets(vm)
    yield from _check_pairs(vm)
    yield from _check_counts(vm)
    yield from _check_realtime(vm)
    yield from _check_bandwidth(vm)


def _check_sets(vm: VmDescriptor) -> Iterator[Hit]:
    seen_sets: dict[int, int] = {}
    for index, cs in enumerate(vm.cpu_sets):
        if cs.id in seen_sets:
            yield CPU_SET_DUPLICATE.hit(
                ("cpu_sets", index, "id"),
                f"cpu-set id {cs.id} is used by cpu_sets[{seen_sets[cs.id]}] and cpu_sets[{index}]",
            )
        else:
            seen_sets[cs.id] = index
    owner: dict[int, int] = {}
    for index, cs in enumerate(vm.cpu_sets):
        for pos, vcpu in enumerate(cs.vcpus):
            if vcpu in owner:
                where = (
                    f"twice in cpu-set {cs.id}"
                    if owner[vcpu] == index
                    else f"in cpu-sets {vm.cpu_sets[owner[vcpu]].id} and {cs.id}"
                )
                yield VCPU_DUPLICATE.hit(
                    ("cpu_sets", index, "vcpus", pos), f"vCPU {vcpu} is listed {where}"
                )
            else:
                owner[vcpu] = index
    if vm.cpu_sets and owner:
        ids = sorted(owner)
        if ids != list(range(len(ids))):
            # among the first N + 8 integers at most N are taken: enough to name a few gaps
            missing = [i for i in range(min(max(ids), len(ids) + 8)) if i not in owner]
            detail = f"missing {missing[:8]}" if missing else f"first id is {ids[0]}"
            yield VCPU_IDS_GAP.hit(
                ("cpu_sets",), f"{len(ids)} vCPUs are numbered {ids[0]}..{ids[-1]} ({detail})"
            )
    if vm.cpu_oversubscription and any(not cs.floating for cs in vm.cpu_sets):
        yield PINNED_OVERSUBSCRIBED.hit(
            ("cpu_oversubscription",),
            f"{len(vm.cpu_sets)} cpu-set(s) ask for pinned vCPUs, yet cpu_oversubscription is true",
        )


def _check_pairs(vm: VmDescriptor) -> Iterator[Hit]:
    for index, cs in enumerate(vm.cpu_sets):
        members = set(cs.vcpus)
        used: dict[int, int] = {}
        for p, pair in enumerate(cs.howtogroup):
            a, b = pair
            if a == b:
                yield PAIR_REUSED.hit(
                    ("cpu_sets", index, "howtogroup", p),
                    f"pair [{a}, {b}] names vCPU {a} twice; a pair takes the two threads of one core",
                )
            for vcpu in dict.fromkeys(pair):
                if vcpu not in members:
                    yield PAIR_OUTSIDE_SET.hit(
                        ("cpu_sets", index, "howtogroup", p),
                        f"pair [{a}, {b}] names vCPU {vcpu}, which is not in cpu-set {cs.id} "
                        f"(its vCPUs: {list(cs.vcpus)})",
                    )
                elif vcpu in used:
                    yield PAIR_REUSED.hit(
                        ("cpu_sets", index, "howtogroup", p),
                        f"vCPU {vcpu} is in pairs {used[vcpu]} and {p} of cpu-set {cs.id}",
                    )
                else:
                    used[vcpu] = p
        policy = cs.thread_policy or vm.cpu_thread_policy
        if policy is ThreadPolicy.require:
            single = [v for v in cs.vcpus if v not in used]
            if single:
                pairs = [single[k : k + 2] for k in range(0, len(single) - 1, 2)]
                odd = f"; vCPU {single[-1]} takes a core alone" if len(single) % 2 else ""
                yield REQUIRE_UNPAIRED.hit(
                    ("cpu_sets", index, "howtogroup"),
                    f"thread policy 'require': {len(single)} vCPU(s) of cpu-set {cs.id} are in no "
                    f"pair; placement pairs them as {pairs}{odd}",
                )


def _check_counts(vm: VmDescriptor) -> Iterator[Hit]:
    if vm.cpu_sets and vm.vcpus is not None:
        total = sum(len(cs.vcpus) for cs in vm.cpu_sets)
        if total != vm.vcpus:
            yield VCPU_COUNT_MISMATCH.hit(
                ("vcpus",), f"vcpus is {vm.vcpus} but the cpu-sets hold {total} vCPUs"
            )
    if not vm.cpu_sets and vm.emulator_threads.value == "isolate":
        yield EMULATOR_SHARED.hit(
            ("emulator_threads",), "emulator_threads is 'isolate' but the VM has no cpu-sets"
        )


def _check_realtime(vm: VmDescriptor) -> Iterator[Hit]:
    if not vm.realtime_vcpus:
        return
    ids = _vcpu_ids(vm)
    for pos, vcpu in enumerate(vm.realtime_vcpus):
        if vcpu not in ids:
            yield REALTIME_UNKNOWN.hit(
                ("realtime_vcpus", pos),
                f"realtime vCPU {vcpu} is not one of the VM's {len(ids)} vCPUs",
            )
    if vm.cpu_oversubscription:
        yield REALTIME_SHARED.hit(
            ("realtime_vcpus",),
            f"{len(vm.realtime_vcpus)} realtime vCPU(s) but cpu_oversubscription is true",
        )
    realtime = set(vm.realtime_vcpus)
    for index, cs in enumerate(vm.cpu_sets):
        for p, pair in enumerate(cs.howtogroup):
            if realtime & set(pair):
                yield REALTIME_PAIRED.hit(
                    ("cpu_sets", index, "howtogroup", p),
                    f"realtime vCPU(s) {sorted(realtime & set(pair))} share a core in pair "
                    f"{list(pair)}",
                )
        policy = cs.thread_policy or vm.cpu_thread_policy
        single = sorted(realtime & set(cs.single_vcpus))
        if single and policy is ThreadPolicy.prefer:
            yield REALTIME_SIBLING_SHARED.hit(
                ("cpu_sets", index, "thread_policy")
                if cs.thread_policy
                else ("cpu_thread_policy",),
                f"realtime vCPU(s) {single} of cpu-set {cs.id} are unpaired under thread policy "
                "'prefer': their core's other thread may go to another VM",
            )
    if ids and len(ids) == len({v for v in vm.realtime_vcpus if v in ids}):
        yield REALTIME_ALL.hit(
            ("realtime_vcpus",), f"all {len(ids)} vCPUs are realtime; none is left for housekeeping"
        )


def _check_bandwidth(vm: VmDescriptor) -> Iterator[Hit]:
    ids = {cs.id for cs in vm.cpu_sets}
    seen: dict[frozenset[int], int] = {}
    for index, link in enumerate(vm.cpu_set_bandwidth):
        a, b = link.cpu_sets
        for pos, cs_id in enumerate(link.cpu_sets):
            if cs_id not in ids:
                yield BANDWIDTH_UNKNOWN_SET.hit(
                    ("cpu_set_bandwidth", index, "cpu_sets", pos),
                    f"cpu-set {cs_id} does not exist (cpu-sets: {sorted(ids)})",
                )
        if a == b:
            yield BANDWIDTH_SAME_SET.hit(
                ("cpu_set_bandwidth", index, "cpu_sets"), f"names cpu-set {a} twice"
            )
            continue
        key = frozenset(link.cpu_sets)
        if key in seen:
            yield BANDWIDTH_DUPLICATE.hit(
                ("cpu_set_bandwidth", index),
                f"cpu-sets {a} and {b} already have an entry at cpu_set_bandwidth[{seen[key]}]",
            )
        else:
            seen[key] = index
