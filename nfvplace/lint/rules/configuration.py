"""VM Configuration rules: pins, vCPUs and resources consistent (NFV801-NFV819)."""

from __future__ import annotations

from collections.abc import Iterator

from ...models.configuration import VmConfiguration
from ...models.vmd import InterfaceMode
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "configuration"

PU_PINNED_TWICE = Rule(
    "NFV801",
    Severity.error,
    FAMILY,
    "A host PU is held twice (two vCPUs, emulator threads or reserved siblings)",
    "give every vCPU, emulator thread and reserved sibling its own PU",
)
VCPU_TWICE = Rule(
    "NFV802",
    Severity.error,
    FAMILY,
    "A vCPU is pinned in more than one cpu-set",
    "pin each vCPU once",
)
VCPU_COUNT_MISMATCH = Rule(
    "NFV803",
    Severity.error,
    FAMILY,
    "'vcpus' differs from the pinned plus shared vCPUs",
    "make vcpus equal to the number of pins plus shared.vcpus, or drop it",
)
REALTIME_NOT_PINNED = Rule(
    "NFV804",
    Severity.error,
    FAMILY,
    "A realtime vCPU is not pinned to a PU",
    "pin every realtime vCPU in a cpu-set's vcpu_pins",
)
HUGEPAGES_EXCEED_MEMORY = Rule(
    "NFV805",
    Severity.error,
    FAMILY,
    "A cpu-set's hugepages exceed its memory_mib",
    "raise memory_mib or use fewer pages",
)
INTERFACE_UNKNOWN_SET = Rule(
    "NFV806",
    Severity.error,
    FAMILY,
    "An interface names a cpu-set the configuration does not have",
    "name a cpu-set id from 'cpu_sets'",
)
INTERFACE_NODE_MISMATCH = Rule(
    "NFV807",
    Severity.error,
    FAMILY,
    "An interface of a cpu-set sits on another NUMA node than the cpu-set",
    "use a port or VF on the cpu-set's node",
)
MEMORY_MISMATCH = Rule(
    "NFV808",
    Severity.error,
    FAMILY,
    "'memory_mib' differs from the memory of the cpu-sets and shared part",
    "make memory_mib the sum of the cpu-sets' and shared memory, or drop it",
)
LINK_UNKNOWN_SET = Rule(
    "NFV809",
    Severity.error,
    FAMILY,
    "A cpu_set_links entry names a cpu-set the configuration does not have",
    "name two cpu-set ids from 'cpu_sets'",
)
CPU_SET_DUPLICATE = Rule(
    "NFV810",
    Severity.error,
    FAMILY,
    "Two cpu-sets of the configuration have the same id",
    "number the cpu-sets as in the VM Descriptor",
)
PASSTHROUGH_NO_ADDRESS = Rule(
    "NFV811",
    Severity.error,
    FAMILY,
    "A dedicated or SR-IOV interface has no PCI address",
    "give the port or VF handed to the VM in pci_address",
)
REALTIME_UNKNOWN = Rule(
    "NFV812",
    Severity.error,
    FAMILY,
    "A realtime vCPU is not a vCPU of the configuration",
    "list only pinned vCPU ids in realtime_vcpus",
)

VCPU_IDS_GAP = Rule(
    "NFV813",
    Severity.error,
    FAMILY,
    "The pinned vCPU ids are not within 0..N-1, N being the pinned plus shared vCPUs",
    "number the vCPUs as in the VM Descriptor, 0..N-1",
)

RULES = (
    PU_PINNED_TWICE,
    VCPU_TWICE,
    VCPU_COUNT_MISMATCH,
    REALTIME_NOT_PINNED,
    HUGEPAGES_EXCEED_MEMORY,
    INTERFACE_UNKNOWN_SET,
    INTERFACE_NODE_MISMATCH,
    MEMORY_MISMATCH,
    LINK_UNKNOWN_SET,
    CPU_SET_DUPLICATE,
    PASSTHROUGH_NO_ADDRESS,
    REALTIME_UNKNOWN,
    VCPU_IDS_GAP,
)


def check_configuration(config: VmConfiguration) -> Iterator[Hit]:
    yield from _check_pins(config)
    yield from _check_totals(config)
    yield from _check_interfaces(config)


def _check_pins(config: VmConfiguration) -> Iterator[Hit]:
    holder: dict[int, str] = {}

    def hold(pu: int, what: str, path: tuple[str | int, ...]) -> Iterator[Hit]:
        if pu in holder:
            yield PU_PINNED_TWICE.hit(path, f"PU {pu} is held by {holder[pu]} and by {what}")
        else:
            holder[pu] = what

    vcpu_set: dict[int, int] = {}
    set_ids: dict[int, int] = {}
    for index, cs in enumerate(config.cpu_sets):
        if cs.id in set_ids:
            yield CPU_SET_DUPLICATE.hit(
                ("cpu_sets", index, "id"), f"cpu-set id {cs.id} is also cpu_sets[{set_ids[cs.id]}]"
            )
        set_ids.setdefault(cs.id, index)
        for vcpu, pu in cs.vcpu_pins.items():
            path = ("cpu_sets", index, "vcpu_pins", str(vcpu))
            if vcpu in vcpu_set:
                yield VCPU_TWICE.hit(
                    path, f"vCPU {vcpu} is pinned in cpu-sets {vcpu_set[vcpu]} and {cs.id}"
                )
            vcpu_set.setdefault(vcpu, cs.id)
            yield from hold(pu, f"vCPU {vcpu}", path)
        for pos, pu in enumerate(cs.reserved_siblings):
            yield from hold(
                pu,
                f"a reserved sibling of cpu-set {cs.id}",
                ("cpu_sets", index, "reserved_siblings", pos),
            )
        pages = cs.hugepages
        if pages is not None and pages.total_mib > cs.memory_mib:
            yield HUGEPAGES_EXCEED_MEMORY.hit(
                ("cpu_sets", index, "hugepages"),
                f"{pages.count} pages of {pages.size_kib} KiB = {pages.total_mib} MiB, more than "
                f"memory_mib {cs.memory_mib}",
            )
    for pos, pu in enumerate(config.emulator_pins):
        yield from hold(pu, "the emulator threads", ("emulator_pins", pos))
    yield from _check_vcpu_ids(config, set(vcpu_set))


def _check_vcpu_ids(config: VmConfiguration, known: set[int]) -> Iterator[Hit]:
    """Pinned vCPU ids within 0..N-1 (N counting the shared ones); realtime vCPUs pinned."""
    shared = config.shared.vcpus if config.shared else 0
    total = len(known) + shared
    outside = sorted(v for v in known if v >= total)
    if outside:
        yield VCPU_IDS_GAP.hit(
            ("cpu_sets",),
            f"vCPU id(s) {outside[:8]} are pinned, but the VM has {total} vCPUs "
            f"({len(known)} pinned + {shared} shared): ids must be 0..{total - 1}",
        )
    for pos, vcpu in enumerate(config.realtime_vcpus):
        if vcpu in known:
            continue
        if vcpu < total:
            yield REALTIME_NOT_PINNED.hit(
                ("realtime_vcpus", pos), f"realtime vCPU {vcpu} floats on shared PUs"
            )
        else:
            yield REALTIME_UNKNOWN.hit(
                ("realtime_vcpus", pos),
                f"realtime vCPU {vcpu} is not one of the {total} vCPUs",
            )


def _check_totals(config: VmConfiguration) -> Iterator[Hit]:
    pinned = sum(len(cs.vcpu_pins) for cs in config.cpu_sets)
    shared = config.shared.vcpus if config.shared else 0
    if config.vcpus is not None and config.vcpus != pinned + shared:
        yield VCPU_COUNT_MISMATCH.hit(
            ("vcpus",),
            f"vcpus is {config.vcpus} but {pinned} vCPU(s) are pinned and {shared} shared",
        )
    memory = sum(cs.memory_mib for cs in config.cpu_sets) + (
        config.shared.memory_mib if config.shared else 0
    )
    if config.memory_mib is not None and config.memory_mib != memory:
        yield MEMORY_MISMATCH.hit(
            ("memory_mib",),
            f"memory_mib is {config.memory_mib} but the cpu-sets and shared part hold {memory} MiB",
        )
    ids = {cs.id for cs in config.cpu_sets}
    for index, link in enumerate(config.cpu_set_links):
        for pos, cs_id in enumerate(link.cpu_sets):
            if cs_id not in ids:
                yield LINK_UNKNOWN_SET.hit(
                    ("cpu_set_links", index, "cpu_sets", pos),
                    f"cpu-set {cs_id} does not exist (cpu-sets: {sorted(ids)})",
                )


def _check_interfaces(config: VmConfiguration) -> Iterator[Hit]:
    nodes = {cs.id: cs.numa_node for cs in config.cpu_sets}
    for index, interface in enumerate(config.interfaces):
        path = ("interfaces", index)
        if interface.cpu_set is not None:
            if interface.cpu_set not in nodes:
                yield INTERFACE_UNKNOWN_SET.hit(
                    (*path, "cpu_set"),
                    f"interface '{interface.name}' names cpu-set {interface.cpu_set} "
                    f"(cpu-sets: {sorted(nodes)})",
                )
            elif (
                interface.numa_node is not None and interface.numa_node != nodes[interface.cpu_set]
            ):
                yield INTERFACE_NODE_MISMATCH.hit(
                    (*path, "numa_node"),
                    f"interface '{interface.name}' is on node {interface.numa_node} but cpu-set "
                    f"{interface.cpu_set} is on node {nodes[interface.cpu_set]}",
                )
        if (
            interface.mode in (InterfaceMode.dedicated, InterfaceMode.sriov)
            and interface.pci_address is None
        ):
            yield PASSTHROUGH_NO_ADDRESS.hit(
                path, f"{interface.mode.value} interface '{interface.name}' has no pci_address"
            )
