"""OSM's `numa-node-policy` (and SOL006's, in OSM's augment) as cpu-sets: one per guest NUMA node,
with its vCPUs (listed, or counted from paired threads, cores and threads), memory and pairs.

`node-cnt` may count more nodes than the policy lists: the unlisted ones share the vCPUs and the
memory the listed ones leave, and take the lowest ids the listed ones do not use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import DialectError, Page, as_list, as_mapping, hugepages_of, parse_count, parse_int


def numa_cpu_sets(
    numa: Mapping[str, Any],
    numa_path: PathKey,
    vcpus: int | None,
    memory: tuple[int, PathKey],
    page: Page,
    origins: dict[PathKey, PathKey],
) -> list[dict[str, Any]] | None:
    """One cpu-set per NUMA node; None when neither the VDU nor the nodes say the vCPU count.

    `memory` is the VDU's memory in MiB and the source field that says it.
    """
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
    if len(nodes) > count:
        raise DialectError(
            f"node-cnt is {count} but the policy lists {len(nodes)} nodes",
            (*numa_path, "node-cnt"),
        )
    cpu_sets = _listed(nodes, numa_path, vcpus, memory[0], count, origins)
    if count > len(nodes):
        cnt_path = (*numa_path, "node-cnt") if "node-cnt" in numa else numa_path
        cpu_sets += _unlisted(cpu_sets, count, cnt_path, vcpus, memory, origins)
    for cpu_set in cpu_sets:
        pages = hugepages_of(page, cpu_set["memory_mib"])
        if pages is not None:
            cpu_set["hugepages"] = pages
    return cpu_sets


def _listed(
    nodes: list[Mapping[str, Any]],
    numa_path: PathKey,
    vcpus: int,
    memory: int,
    count: int,
    origins: dict[PathKey, PathKey],
) -> list[dict[str, Any]]:
    """The cpu-sets of the nodes the policy lists."""
    cpu_sets = []
    next_vcpu = 0
    for index, node in enumerate(nodes):
        node_path = (*numa_path, "node", index)
        share = vcpus // count if index < count - 1 else vcpus - (vcpus // count) * (count - 1)
        ids, pairs = _vcpus(node, node_path, range(next_vcpu, next_vcpu + share))
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
        origins[("cpu_sets", index)] = node_path
        origins[("cpu_sets", index, "vcpus")] = (
            (*node_path, "vcpu") if node.get("vcpu") else node_path
        )
        origins[("cpu_sets", index, "memory_mib")] = (
            (*node_path, "memory-mb") if "memory-mb" in node else node_path
        )
        cpu_sets.append(cpu_set)
    return cpu_sets


def _vcpus(
    node: Mapping[str, Any], node_path: PathKey, default: range
) -> tuple[list[int], list[list[int]]]:
    """A listed node's vCPU ids (given, or counted from its threads, else `default`) and pairs."""
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
        start, share = default.start, len(default)
        if "num-paired-threads" in paired or "num-cores" in node or "num-threads" in node:
            share = (
                2
                * parse_count(paired.get("num-paired-threads", 0), "num-paired-threads", node_path)
                + parse_count(node.get("num-cores", 0), "num-cores", node_path)
                + parse_count(node.get("num-threads", 0), "num-threads", node_path)
            )
        ids = list(range(start, start + share))
    if not pairs and "num-paired-threads" in paired:
        n_pairs = parse_count(paired["num-paired-threads"], "num-paired-threads", node_path)
        pairs = [ids[2 * i : 2 * i + 2] for i in range(min(n_pairs, len(ids) // 2))]
    return ids, pairs


def _unlisted(
    listed: list[dict[str, Any]],
    count: int,
    cnt_path: PathKey,
    vcpus: int,
    memory: tuple[int, PathKey],
    origins: dict[PathKey, PathKey],
) -> list[dict[str, Any]]:
    """The cpu-sets of the nodes `node-cnt` (at `cnt_path`) counts but the policy does not list:
    the vCPUs and memory the listed nodes leave, shared out, each with the lowest unused id."""
    missing = count - len(listed)
    taken = {v for cpu_set in listed for v in cpu_set["vcpus"]}
    free = [v for v in range(vcpus) if v not in taken]
    listed_mib = sum(cpu_set["memory_mib"] for cpu_set in listed)
    left_mib = memory[0] - listed_mib
    if len(free) < missing:
        raise DialectError(
            f"node-cnt {count} counts {missing} node(s) the policy does not list, but the listed "
            f"nodes hold {len(taken)} of the VDU's {vcpus} vCPUs, leaving {len(free)}",
            cnt_path,
        )
    if left_mib < missing:
        raise DialectError(
            f"the listed nodes' memory-mb add up to {listed_mib} MiB of the VDU's "
            f"{memory[0]} MiB, leaving none for the {missing} node(s) node-cnt {count} adds",
            memory[1],
        )
    used_ids = {cpu_set["id"] for cpu_set in listed}
    share, mib = len(free) // missing, left_mib // missing  # the last node takes the rest
    cpu_sets = []
    for k in range(missing):
        last = k == missing - 1
        node_id = next(i for i in range(len(used_ids) + 1) if i not in used_ids)
        used_ids.add(node_id)
        index = len(listed) + k
        vcpu_ids = free[k * share :] if last else free[k * share : (k + 1) * share]
        node_mib = left_mib - mib * k if last else mib
        cpu_sets.append({"id": node_id, "vcpus": vcpu_ids, "memory_mib": node_mib})
        for key in ((), ("vcpus",), ("memory_mib",)):
            origins[("cpu_sets", index, *key)] = cnt_path
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
