"""Turning a neutral topology (plus optional live facts) into a Compute Host Descriptor.

Pure: no I/O. The rules, all documented in `docs/discovery.md`:

- every PU is kept; a PU outside the root's allowed cpuset (cgroup-restricted export) or offline is
  `eligible: false`; when the host isolates PUs for guests (`isolcpus`, `nohz_full`, cpuset
  partitions) only the isolated ones are eligible, the others being the host's housekeeping PUs;
- a core's `siblings` are the PUs of the same hwloc Core; a PU with no Core object is its own core;
- a node's hugepage pools are its page sizes above the base (smallest) page size;
- NICs, their ports and VFs, and other PCI devices: see `nics.py`;
- what the source cannot tell is listed in `provenance.unknown`, never guessed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from .. import errors
from ..errors import DiscoveryError
from ..models.cache import CacheAllocation
from ..models.chd import (
    CacheSizes,
    ComputeHostDescriptor,
    Cpu,
    HostMemory,
    HugepagePool,
    Kernel,
    Nic,
    NodeMemory,
    NumaNode,
    PciDevice,
    Processor,
    Provenance,
)
from ..models.validation import plain
from .facts import HostFacts
from .hwtopo import HwTopology
from .nics import nics_by_node

MIB = 1024 * 1024
_GHZ = re.compile(r"@\s*([0-9]+(?:\.[0-9]+)?)\s*GHz", re.IGNORECASE)


def _vendor_from_model(model: str | None) -> str | None:
    if not model:
        return None
    lowered = model.lower()
    if "intel" in lowered:
        return "GenuineIntel"
    if "amd" in lowered:
        return "AuthenticAMD"
    return None


def processor_from_topology(topo: HwTopology, unknown: list[str]) -> Processor:
    """The processor as far as an hwloc export tells it (no flags: those come from cpuinfo)."""
    model = topo.info.get("CPUModel")
    vendor = topo.info.get("CPUVendor") or _vendor_from_model(model)
    if vendor is None:
        unknown.append("processor.vendor")
    if model is None:
        unknown.append("processor.model")
    frequency: float | None = None
    match = _GHZ.search(model or "")
    if match:
        frequency = float(match.group(1)) * 1000
    else:
        unknown.append("processor.frequency_mhz")
    unknown.append("processor.flags")
    cache = {(c.level, c.kind): c.size_bytes // 1024 for c in topo.caches}
    return Processor(
        vendor=vendor or "unknown",
        model=model or "unknown",
        architecture=topo.info.get("Architecture"),
        frequency_mhz=frequency,
        packages=len(topo.packages) or None,
        cache=CacheSizes(
            l1d_kib=cache.get((1, "data")),
            l1i_kib=cache.get((1, "instruction")),
            l2_kib=cache.get((2, "unified")),
            l3_kib=cache.get((3, "unified")),
        )
        if cache
        else None,
    )


def _hugepages(
    topo: HwTopology, facts: HostFacts, node_id: int, unknown: set[str]
) -> tuple[HugepagePool, ...]:
    if facts.hugepages is not None and node_id in facts.hugepages:
        return tuple(
            HugepagePool(size_kib=size, total=total, used=max(total - free, 0))
            for size, (total, free) in sorted(facts.hugepages[node_id].items())
        )
    node = next(n for n in topo.nodes if n.os_index == node_id)
    sizes = [size for size, _ in node.page_types] or list(topo.page_sizes)
    if not sizes:
        unknown.add("numa_nodes[*].memory.hugepages")
        return ()
    base = min(sizes)
    counts = dict(node.page_types)
    pools = []
    for size in sorted(set(sizes)):
        if size == base:
            continue
        if size not in counts:
            unknown.add("numa_nodes[*].memory.hugepages[*].total")
        pools.append(HugepagePool(size_kib=size // 1024, total=counts.get(size, 0)))
    if pools:
        unknown.add("numa_nodes[*].memory.hugepages[*].used")
    return tuple(pools)


def _distances(
    topo: HwTopology, facts: HostFacts, node_ids: list[int]
) -> tuple[tuple[int, ...], ...] | None:
    if facts.distances is not None and set(facts.distances) == set(node_ids):
        rows = [facts.distances[n] for n in node_ids]
        if all(len(row) == len(node_ids) for row in rows):
            return tuple(tuple(row) for row in rows)
    return topo.distances


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def build_chd(
    topo: HwTopology,
    host_id: str,
    facts: HostFacts | None = None,
    *,
    source: str = "hwloc-xml",
    tool: str | None = None,
) -> ComputeHostDescriptor:
    """The CHD of a topology; `facts` adds what a live host tells beyond hwloc.

    Raises DiscoveryError if the values cannot make a valid CHD (e.g. an invalid host id).
    """
    try:
        return _build(topo, host_id, facts, source=source, tool=tool)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {plain(err)[0]}"
            for err in exc.errors(include_url=False)[:5]
        )
        raise DiscoveryError(
            errors.DISCOVERY_FAILED, f"the topology does not make a valid CHD: {problems}"
        ) from exc


def _build(
    topo: HwTopology,
    host_id: str,
    facts: HostFacts | None = None,
    *,
    source: str = "hwloc-xml",
    tool: str | None = None,
) -> ComputeHostDescriptor:
    facts = facts or HostFacts()
    unknown: list[str] = list(facts.unknown)
    notes: list[str] = list(facts.notes)
    node_ids = [n.os_index for n in topo.nodes]
    cpus = _cpus_by_node(topo, facts, node_ids, notes)
    nics, others = nics_by_node(topo, facts, node_ids, unknown, notes)
    nodes = _numa_nodes(topo, facts, cpus, (nics, others), unknown, notes)
    processor = facts.processor or processor_from_topology(topo, unknown)
    if facts.processor is not None and processor.packages is None:
        processor = processor.model_copy(update={"packages": len(topo.packages) or None})
    total_bytes = sum(n.memory_bytes or 0 for n in topo.nodes)
    distances = _distances(topo, facts, node_ids)
    if distances is None and len(node_ids) > 1:
        unknown.append("numa_distances")
    if facts.hypervisor is None:
        unknown.append("hypervisor")
    kernel = _kernel(topo, facts, unknown)
    cache = facts.cache_allocation or _cache_allocation(topo, processor, unknown, notes)
    return ComputeHostDescriptor(
        id=host_id,
        processor=processor,
        memory=HostMemory(total_mib=total_bytes // MIB) if total_bytes else None,
        hypervisor=facts.hypervisor,
        kernel=kernel,
        numa_nodes=tuple(nodes),
        numa_distances=distances,
        cache_allocation=CacheAllocation.model_validate(cache) if cache else None,
        labels=dict(facts.labels),
        provenance=Provenance(
            source="live" if source == "live" else "hwloc-xml",
            tool=tool,
            unknown=_dedupe(unknown),
            notes=_dedupe(notes),
        ),
    )


def _cache_allocation(
    topo: HwTopology, processor: Processor, unknown: list[str], notes: list[str]
) -> dict[str, Any] | None:
    """The L3 caches an export states, unless the processor's flags are known and lack cache
    allocation (`cat_l3`); how many classes of service it has only resctrl says, so
    `cache_allocation.classes` stays unknown (no VM asking ways is placed here until it is given,
    e.g. `--set cache_allocation.classes=16`)."""
    flags = {f.lower() for f in processor.flags}
    if (flags and "cat_l3" not in flags) or not topo.l3:
        return None
    unknown.append("cache_allocation.classes")
    notes.append(
        "L3 caches and their ways from hwloc; classes of service unknown (resctrl's num_closids)"
    )
    domains = [
        {
            "id": c.os_index,
            "numa_nodes": list(c.nodes),
            "ways": c.ways,
            "way_kib": c.size_bytes // 1024 // c.ways,
        }
        for c in topo.l3
    ]
    return {"domains": domains}


def _cpus_by_node(
    topo: HwTopology, facts: HostFacts, node_ids: list[int], notes: list[str]
) -> dict[int, list[Cpu]]:
    pus_by_core: dict[int, list[int]] = defaultdict(list)
    for pu in topo.pus:
        pus_by_core[pu.core].append(pu.os_index)
    cpus: dict[int, list[Cpu]] = defaultdict(list)
    homeless = [pu.os_index for pu in topo.pus if pu.node is None or pu.node not in node_ids]
    if homeless:
        notes.append(
            f"PUs {homeless} have no NUMA node in the source; listed under node {node_ids[0]}"
        )
    disallowed = [pu.os_index for pu in topo.pus if not pu.allowed]
    if disallowed:
        notes.append(
            f"{len(disallowed)} PUs are outside the allowed cpuset (cgroup or offline) and "
            "marked eligible: false"
        )
    for pu in topo.pus:
        eligible = pu.allowed and pu.os_index not in facts.offline
        if facts.isolated is not None:
            eligible = eligible and pu.os_index in facts.isolated
        node = pu.node if pu.node in node_ids else node_ids[0]
        assert node is not None
        cpus[node].append(
            Cpu(
                id=pu.os_index,
                core=pu.core,
                package=pu.package,
                siblings=tuple(sorted(pus_by_core[pu.core])),
                eligible=eligible,
            )
        )
    if facts.isolated is not None:
        notes.append(
            "PUs not isolated for guests (isolcpus/nohz_full/cpuset) are host housekeeping PUs "
            "and marked eligible: false"
        )
    return cpus


def _numa_nodes(
    topo: HwTopology,
    facts: HostFacts,
    cpus: dict[int, list[Cpu]],
    devices: tuple[dict[int, list[Nic]], dict[int, list[PciDevice]]],
    unknown: list[str],
    notes: list[str],
) -> list[NumaNode]:
    nics, others = devices
    unknown_set: set[str] = set()
    nodes: list[NumaNode] = []
    for hw_node in topo.nodes:
        if hw_node.memory_bytes is None:
            unknown_set.add("numa_nodes[*].memory.total_mib")
        if not hw_node.allowed:
            notes.append(f"NUMA node {hw_node.os_index} is outside the allowed nodeset")
        nodes.append(
            NumaNode(
                id=hw_node.os_index,
                cpus=tuple(sorted(cpus.get(hw_node.os_index, []), key=lambda c: c.id)),
                memory=NodeMemory(
                    total_mib=(hw_node.memory_bytes or 0) // MIB,
                    hugepages=_hugepages(topo, facts, hw_node.os_index, unknown_set),
                ),
                nics=tuple(nics.get(hw_node.os_index, [])),
                pci_devices=tuple(others.get(hw_node.os_index, [])),
            )
        )
    unknown.extend(sorted(unknown_set))
    return nodes


def _kernel(topo: HwTopology, facts: HostFacts, unknown: list[str]) -> Kernel | None:
    kernel = facts.kernel
    if kernel is None and topo.info.get("OSRelease"):
        kernel = Kernel(version=topo.info["OSRelease"])
        unknown.append("kernel.cmdline")
    if kernel is None:
        unknown.append("kernel")
    return kernel
