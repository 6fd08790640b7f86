"""OSM's `numa-node-policy` (and SOL006's, in OSM's augment) as cpu-sets: one per guest NUMA node,
with its vCPUs (listed, or counted from paired threads, cores and threads), memory and pairs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import DialectError, as_list, as_mapping, parse_count, parse_int


def numa_cpu_sets(
    numa: Mapping[str, Any],
    numa_path: PathKey,
    vcpus: int | None,
    memory: int,
    page_kib: int | None,
    origins: dict[PathKey, PathKey],
) -> list[dict[str, Any]] | None:
    """One cpu-set per NUMA node; None when neither the VDU nor the nodes say the vCPU count."""
    nodes = [n for n in as_list(numa.get("node")) if isinstance(n, Mapping)]
    count = parse_count(numa.get("node-cnt", len(nodes) or 1), "node-cnt", (*numa_path, "node-cnt"))
    if vcpus is None:
        vcpus = counted_vcpus(nodes, numa_path)
        if vcpus is None or len(nodes) < count:
            return None
    if count <= 0 or count > vcpus:
        raise DialectError(
            f"node-cnt must be between 1 and the vCPU count {vcpus}, got {count}",
            (*numa_path, "node-cnt"),
        )
    cpu_sets = []
    next_vcpu = 0
    for index in range(count):
        node = nodes[index] if index < len(nodes) else {}
        node_path = (*numa_path, "node", index) if index < len(nodes) else numa_path
        share = vcpus // count if index < count - 1 else vcpus - (vcpus // count) * (count - 1)
        ids = [
            parse_int(as_mapping(v).get("id", v), "vcpu id", (*node_path, "vcpu", i))
            for i, v in enumerate(as_list(node.get("vcpu")))
        ]
        paired = as_mapping(node.get("paired-threads"))
        pairs = [
            [
                parse_int(p.get("thread-a"), "thread-a", (*node_path, "paired-threads")),
                parse_int(p.get("thread-b"), "thread-b", (*node_path, "paired-threads")),
            ]
            for p in as_list(paired.get("paired-thread-ids"))
            if isinstance(p, Mapping)
        ]
        if not ids:
            if "num-paired-threads" in paired or "num-cores" in node or "num-threads" in node:
                share = (
                    2
                    * parse_count(
                        paired.get("num-paired-threads", 0), "num-paired-threads", node_path
                    )
                    + parse_count(node.get("num-cores", 0), "num-cores", node_path)
                    + parse_count(node.get("num-threads", 0), "num-threads", node_path)
                )
            ids = list(range(next_vcpu, next_vcpu + share))
        if not pairs and "num-paired-threads" in paired:
            n_pairs = parse_count(paired["num-paired-threads"], "num-paired-threads", node_path)
            pairs = [ids[2 * i : 2 * i + 2] for i in range(min(n_pairs, len(ids) // 2))]
        next_vcpu = max([next_vcpu, *(v + 1 for v in ids)])
        mem = parse_int(
            node.get("memory-mb", memory // count), "memory-mb", (*node_path, "memory-mb")
        )
        cpu_set: dict[str, Any] = {
            "id": parse_int(node.get("id", index), "node id", (*node_path, "id")),
            "vcpus": ids,
            "memory_mib": mem,
        }
        if pairs:
            cpu_set["howtogroup"] = pairs
            origins[("cpu_sets", index, "howtogroup")] = (*node_path, "paired-threads")
        if page_kib:
            cpu_set["hugepages"] = {"size": f"{page_kib}KiB", "count": mem * 1024 // page_kib}
        origins[("cpu_sets", index)] = node_path
        origins[("cpu_sets", index, "vcpus")] = (
            (*node_path, "vcpu") if node.get("vcpu") else node_path
        )
        origins[("cpu_sets", index, "memory_mib")] = (
            (*node_path, "memory-mb") if "memory-mb" in node else node_path
        )
        cpu_sets.append(cpu_set)
    return cpu_sets


def counted_vcpus(nodes: list[Mapping[str, Any]], numa_path: PathKey) -> int | None:
    """The vCPU count the NUMA nodes give (vcpu lists, paired threads, cores, threads), if all do."""
    total = 0
    for index, node in enumerate(nodes):
        node_path = (*numa_path, "node", index)
        paired = as_mapping(node.get("paired-threads"))
        given = len(as_list(node.get("vcpu"))) + 2 * parse_count(
            paired.get("num-paired-threads", 0), "num-paired-threads", node_path
        )
        given += parse_count(node.get("num-cores", 0), "num-cores", node_path)
        given += parse_count(node.get("num-threads", 0), "num-threads", node_path)
        if not given:
            return None
        total += given
    return total or None
