"""CHD resource-topology rules: PUs, cores, siblings and their availability (clause 8.1.1.4) (NFV401-NFV419)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping

from ...models.chd import ComputeHostDescriptor, Cpu, CpuState, NumaNode
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "topology"
CLAUSE = "8.1.1.4"

PU_DUPLICATE = Rule(
    "NFV401",
    Severity.error,
    FAMILY,
    "Two PUs (hardware threads) of the host have the same id",
    "give every PU its own id, as the OS numbers them",
    CLAUSE,
)
SIBLINGS_OMIT_SELF = Rule(
    "NFV402",
    Severity.error,
    FAMILY,
    "A PU's sibling list does not include the PU itself",
    "list every PU of the core in 'siblings', this one included",
    CLAUSE,
)
SIBLINGS_ASYMMETRIC = Rule(
    "NFV403",
    Severity.error,
    FAMILY,
    "Sibling lists are not symmetric: two PUs of one core list different siblings",
    "give every PU of a core the same sibling list",
    CLAUSE,
)
SIBLINGS_CORE_MISMATCH = Rule(
    "NFV404",
    Severity.error,
    FAMILY,
    "Siblings disagree with core ids: siblings on different cores, or one core's PUs not siblings",
    "siblings are exactly the PUs with the same 'core'; fix one or the other",
    CLAUSE,
)
SIBLING_UNKNOWN = Rule(
    "NFV405",
    Severity.error,
    FAMILY,
    "A sibling list names a PU that the host does not list (or lists on another node)",
    "list the sibling PU on the same NUMA node, or remove it",
    CLAUSE,
)
DEDICATED_NO_OWNER = Rule(
    "NFV406",
    Severity.error,
    FAMILY,
    "A dedicated PU does not name the VM that owns it",
    "add owner: <VM instance>, or set state: free",
    CLAUSE,
)
SHARED_BAD_RATIO = Rule(
    "NFV407",
    Severity.error,
    FAMILY,
    "A shared PU has no oversubscription ratio, or a ratio below 1",
    "give oversubscription_ratio >= 1 (e.g. 4.0 for four vCPUs per thread)",
    CLAUSE,
)
USAGE_RATIO_RANGE = Rule(
    "NFV408",
    Severity.error,
    FAMILY,
    "A shared PU's usage ratio is above 1 (it is a fraction of the oversubscription ratio)",
    "give usage_ratio between 0 and 1",
    CLAUSE,
)
FREE_WITH_OWNER = Rule(
    "NFV409",
    Severity.warning,
    FAMILY,
    "A free PU names an owner or has a usage ratio above 0",
    "remove the owner and usage of a free PU, or set the state they describe",
    CLAUSE,
)
INELIGIBLE_IN_USE = Rule(
    "NFV410",
    Severity.warning,
    FAMILY,
    "A PU not eligible for VMs is marked dedicated or shared",
    "mark host-reserved PUs 'eligible: false' with state free",
    CLAUSE,
)
DISTANCES_SHAPE = Rule(
    "NFV411",
    Severity.error,
    FAMILY,
    "numa_distances is not a square matrix with one row per NUMA node",
    "give one row of N distances per node, N being the number of nodes",
    CLAUSE,
)
INTERCONNECT_UNKNOWN_NODE = Rule(
    "NFV412",
    Severity.error,
    FAMILY,
    "An interconnect link names a NUMA node the host does not have",
    "name two node ids from 'numa_nodes'",
    CLAUSE,
)
CORE_ACROSS_NODES = Rule(
    "NFV413",
    Severity.error,
    FAMILY,
    "One core id appears on two NUMA nodes",
    "core ids are unique within the host; renumber one of them",
    CLAUSE,
)
INTERCONNECT_OVERUSED = Rule(
    "NFV414",
    Severity.error,
    FAMILY,
    "An inter-node link uses more bandwidth than it has",
    "make bandwidth_used_gbps at most bandwidth_gbps",
    CLAUSE,
)
SHARED_WITH_OWNER = Rule(
    "NFV415",
    Severity.warning,
    FAMILY,
    "A shared PU names a single owner",
    "shared PUs belong to several VMs; drop 'owner' or make the PU dedicated",
    CLAUSE,
)

PMD_UNKNOWN = Rule(
    "NFV416",
    Severity.error,
    FAMILY,
    "The vSwitch's poll-mode PUs name a PU the host does not list",
    "list PUs of the host in hypervisor.vswitch.pmd_cpus",
    "8.1.1.3",
)
PMD_ELIGIBLE = Rule(
    "NFV417",
    Severity.warning,
    FAMILY,
    "A PU running the vSwitch's poll-mode threads is eligible for VMs",
    "mark PMD PUs 'eligible: false' so that no VM is pinned on a busy-polling core",
    "8.1.1.3",
)

RULES = (
    PU_DUPLICATE,
    SIBLINGS_OMIT_SELF,
    SIBLINGS_ASYMMETRIC,
    SIBLINGS_CORE_MISMATCH,
    SIBLING_UNKNOWN,
    DEDICATED_NO_OWNER,
    SHARED_BAD_RATIO,
    USAGE_RATIO_RANGE,
    FREE_WITH_OWNER,
    INELIGIBLE_IN_USE,
    DISTANCES_SHAPE,
    INTERCONNECT_UNKNOWN_NODE,
    CORE_ACROSS_NODES,
    INTERCONNECT_OVERUSED,
    SHARED_WITH_OWNER,
    PMD_UNKNOWN,
    PMD_ELIGIBLE,
)


def check_chd(host: ComputeHostDescriptor) -> Iterator[Hit]:
    yield from _check_ids_and_siblings(host)
    yield from _check_states(host)
    yield from _check_nodes(host)
    yield from _check_pmd(host)


def _check_ids_and_siblings(host: ComputeHostDescriptor) -> Iterator[Hit]:
    where: dict[int, tuple[int, int]] = {}
    for n, node in enumerate(host.numa_nodes):
        for c, cpu in enumerate(node.cpus):
            if cpu.id in where:
                on = host.numa_nodes[where[cpu.id][0]].id
                yield PU_DUPLICATE.hit(
                    ("numa_nodes", n, "cpus", c, "id"),
                    f"PU {cpu.id} is listed twice (node {on} and node {node.id})",
                )
            else:
                where[cpu.id] = (n, c)
    core_node: dict[int, int] = {}
    for n, node in enumerate(host.numa_nodes):
        by_id = {cpu.id: cpu for cpu in node.cpus}
        by_core: dict[int, set[int]] = defaultdict(set)
        for cpu in node.cpus:
            by_core[cpu.core].add(cpu.id)
        for core in by_core:
            if core in core_node and core_node[core] != node.id:
                first = next(c for c, cpu in enumerate(node.cpus) if cpu.core == core)
                yield CORE_ACROSS_NODES.hit(
                    ("numa_nodes", n, "cpus", first, "core"),
                    f"core {core} is on node {core_node[core]} and node {node.id}",
                )
            core_node.setdefault(core, node.id)
        for c, cpu in enumerate(node.cpus):
            path = ("numa_nodes", n, "cpus", c, "siblings")
            yield from _check_siblings(cpu, path, node, by_id, by_core)


def _check_siblings(
    cpu: Cpu,
    path: tuple[str | int, ...],
    node: NumaNode,
    by_id: Mapping[int, Cpu],
    by_core: Mapping[int, set[int]],
) -> Iterator[Hit]:
    """A PU's siblings include itself, are PUs of its node, agree with theirs, share its core."""
    siblings = set(cpu.siblings)
    if cpu.id not in siblings:
        yield SIBLINGS_OMIT_SELF.hit(
            path, f"PU {cpu.id} lists siblings {list(cpu.siblings)}, without itself"
        )
    unknown = sorted(s for s in siblings if s not in by_id and s != cpu.id)
    if unknown:
        yield SIBLING_UNKNOWN.hit(
            path,
            f"PU {cpu.id} names sibling(s) {unknown}, not PUs of node {node.id}",
        )
    for other_id in sorted(siblings - {cpu.id} - set(unknown)):
        other = by_id[other_id]
        differs = set(other.siblings) | {other.id} != siblings | {cpu.id}
        if differs and (cpu.id < other_id or cpu.id not in other.siblings):
            yield SIBLINGS_ASYMMETRIC.hit(
                path,
                f"PU {cpu.id} lists siblings {sorted(siblings)} but PU {other_id} "
                f"lists {sorted(other.siblings)}",
            )
        if other.core != cpu.core and cpu.id < other_id:
            yield SIBLINGS_CORE_MISMATCH.hit(
                path,
                f"PUs {cpu.id} and {other_id} are siblings but on cores {cpu.core} "
                f"and {other.core}",
            )
    same_core = by_core[cpu.core] - siblings
    if same_core:
        yield SIBLINGS_CORE_MISMATCH.hit(
            path,
            f"PU(s) {sorted(same_core)} share core {cpu.core} with PU {cpu.id} but are "
            "not in its siblings",
        )


def _check_states(host: ComputeHostDescriptor) -> Iterator[Hit]:
    for n, node in enumerate(host.numa_nodes):
        for c, cpu in enumerate(node.cpus):
            path = ("numa_nodes", n, "cpus", c)
            label = f"PU {cpu.id}"
            if cpu.state is CpuState.dedicated and not cpu.owner:
                yield DEDICATED_NO_OWNER.hit(
                    (*path, "state"), f"{label} is dedicated but has no owner"
                )
            if cpu.state is CpuState.shared:
                ratio = cpu.oversubscription_ratio
                if ratio is None or ratio < 1:
                    got = "none" if ratio is None else f"{ratio:g}"
                    yield SHARED_BAD_RATIO.hit(
                        (*path, "oversubscription_ratio"),
                        f"{label} is shared with oversubscription_ratio {got}; it must be >= 1",
                    )
                if cpu.owner:
                    yield SHARED_WITH_OWNER.hit(
                        (*path, "owner"), f"{label} is shared but names owner '{cpu.owner}'"
                    )
            if cpu.usage_ratio is not None and cpu.usage_ratio > 1:
                yield USAGE_RATIO_RANGE.hit(
                    (*path, "usage_ratio"), f"{label} has usage_ratio {cpu.usage_ratio:g} (> 1)"
                )
            # A free PU may carry the oversubscription ratio it would be shared at.
            if cpu.state is CpuState.free and (cpu.owner or (cpu.usage_ratio or 0) > 0):
                yield FREE_WITH_OWNER.hit(
                    path,
                    f"{label} is free but has owner '{cpu.owner}' and usage {cpu.usage_ratio or 0:g}",
                )
            if not cpu.eligible and cpu.state is not CpuState.free:
                yield INELIGIBLE_IN_USE.hit(
                    (*path, "state"),
                    f"{label} is not eligible for VMs but is marked {cpu.state.value}",
                )


def _check_pmd(host: ComputeHostDescriptor) -> Iterator[Hit]:
    vswitch = host.hypervisor.vswitch if host.hypervisor else None
    if vswitch is None:
        return
    cpus = {cpu.id: cpu for cpu in host.cpus}
    for pos, pu in enumerate(vswitch.pmd_cpus):
        path = ("hypervisor", "vswitch", "pmd_cpus", pos)
        cpu = cpus.get(pu)
        if cpu is None:
            yield PMD_UNKNOWN.hit(path, f"PMD PU {pu} is not a PU of the host")
        elif cpu.eligible:
            yield PMD_ELIGIBLE.hit(path, f"PMD PU {pu} is eligible for VMs")


def _check_nodes(host: ComputeHostDescriptor) -> Iterator[Hit]:
    ids = {node.id for node in host.numa_nodes}
    count = len(host.numa_nodes)
    if host.numa_distances is not None:
        rows = host.numa_distances
        widths = sorted({len(row) for row in rows})
        if len(rows) != count or widths != [count]:
            yield DISTANCES_SHAPE.hit(
                ("numa_distances",),
                f"{len(rows)} row(s) of width {widths} for {count} NUMA node(s)",
            )
    for index, link in enumerate(host.interconnect):
        for pos, node_id in enumerate(link.nodes):
            if node_id not in ids:
                yield INTERCONNECT_UNKNOWN_NODE.hit(
                    ("interconnect", index, "nodes", pos),
                    f"node {node_id} does not exist (nodes: {sorted(ids)})",
                )
        if link.bandwidth_used_gbps > link.bandwidth_gbps:
            yield INTERCONNECT_OVERUSED.hit(
                ("interconnect", index, "bandwidth_used_gbps"),
                f"{link.bandwidth_used_gbps:g} Gbps used of {link.bandwidth_gbps:g}",
            )
