"""Kubernetes NodeResourceTopology objects (`topology.node.k8s.io/v1alpha2`, one per node) as CHDs.

Each `type: Node` zone is a NUMA node. NRT carries counts, not CPU ids or SMT siblings, so the CHD
says what the counts say and no more:

- `cpu`: `capacity` PUs per zone, each its own single-thread core (no sibling layout); the
  `capacity - allocatable` reserved ones are ineligible, the `allocatable - available` ones the
  kubelet gave exclusively are dedicated (owner unknown), the rest free;
- `memory` (bytes): the zone's normal memory, `capacity - allocatable` reserved and
  `allocatable - available` used; `hugepages-2Mi`, `hugepages-1Gi`: pools of `allocatable`
  pages, `allocatable - available` of them used;
- device plugin resources: a VF pool (SR-IOV) becomes one port of the zone whose VFs are the
  pool's devices and whose `physical_network` is the resource name; any other resource becomes
  PCI devices whose `model` is the resource name. Which resources are VF pools: the
  `nfvplace.io/vf-pools` annotation (`name[=speed Gbps],...`) when given, else every resource whose
  name says `sriov` or `vf`. Device addresses are synthesised (`fe<zone>:<resource>:<n>`);
- `costs` give `numa_distances`; the `topologyManagerPolicy`/`topologyManagerScope` attributes
  (or the deprecated `topologyPolicies`) and `topologyManagerOptionPreferClosestNumaNodes` give
  `topology_manager`.

A Kubernetes `List` of them is read item by item (`items`, see `nfvplace.reader`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import ASSUMED, Conversion, DialectError, Note, as_list, as_mapping, identifier
from .k8s_topology_manager import topology_manager
from .kubernetes import (
    api_group,
    is_device,
    is_hugepages,
    list_items,
    page_size_bytes,
    parse_quantity,
)

NAME = "kubernetes-nrt"
GROUP = "topology.node.k8s.io"
KIND = "NodeResourceTopology"
VF_POOLS_ANNOTATION = "nfvplace.io/vf-pools"
MIB = 2**20
MAX_ZONES = 64
MAX_DEVICES = 8 * 32 * 8  # eight buses of 32 devices of 8 functions per resource and zone
MAX_CPUS = 4096  # PUs of the whole node (as many as a VM may have vCPUs)
MAX_HOST_DEVICES = 16384  # VFs and PCI devices of the whole node
IN_USE = "kubernetes:in-use"
"""The owner of what a zone reports in use: NodeResourceTopology counts it, naming no pod."""

UNKNOWN = (
    "processor.vendor",
    "processor.model",
    "numa_nodes.cpus: CPU ids and SMT siblings (NodeResourceTopology gives counts)",
)


def _is_nrt(data: Any) -> bool:
    return (
        isinstance(data, Mapping)
        and data.get("kind") == KIND
        and api_group(data) == GROUP
        and isinstance(data.get("zones"), list)
    )


def detect(data: Mapping[str, Any]) -> bool:
    items = list_items(data)
    if items is not None:
        return bool(items) and all(_is_nrt(item) for item in items)
    return _is_nrt(data)


def convert(data: Mapping[str, Any]) -> Conversion:
    if list_items(data) is not None:
        raise DialectError(
            "a List holds several NodeResourceTopology objects: read it item by item "
            "(nfvplace.load, lint and convert do; PUT /v1/hosts/{node} takes one object)"
        )
    notes: list[Note] = []
    metadata = as_mapping(data.get("metadata"))
    name = str(metadata.get("name") or "")
    if not name:
        raise DialectError("metadata.name (the node's name) is missing", ("metadata", "name"))
    host_id = identifier(name, "node")
    if host_id != name:
        notes.append(Note(("metadata", "name"), f"node name read as host id {host_id!r}", ASSUMED))
    text = as_mapping(metadata.get("annotations")).get(VF_POOLS_ANNOTATION)
    where: PathKey = ("metadata", "annotations", VF_POOLS_ANNOTATION)
    pools = None if text is None else vf_pools(text, where)
    zones = _zones(data, notes)
    nodes: list[dict[str, Any]] = []
    origins: dict[PathKey, PathKey] = {(): (), ("id",): ("metadata", "name")}
    first_cpu = devices = 0
    for position, (node_id, path, zone) in enumerate(zones):
        node = _node(node_id, zone, path, first_cpu, pools, notes)
        first_cpu += len(node["cpus"])
        devices += len(node.get("pci_devices", ())) + sum(
            len(port["vfs"]) for nic in node.get("nics", ()) for port in nic["ports"]
        )
        if devices > MAX_HOST_DEVICES:
            raise DialectError(f"the node has more than {MAX_HOST_DEVICES} devices", path)
        origins[("numa_nodes", position)] = path
        nodes.append(node)
    out: dict[str, Any] = {
        "schema": "nfvplace/chd/v1",
        "id": host_id,
        "processor": {"vendor": "unknown", "model": "unknown"},
        "hypervisor": _runtime(nodes, notes),
        "numa_nodes": nodes,
        "topology_manager": topology_manager(data, notes),
        "provenance": {
            "source": "manual",
            "tool": f"NodeResourceTopology ({data.get('apiVersion')})",
            "unknown": list(UNKNOWN),
            "notes": ["PUs, ports, VFs and devices synthesised from the counts of each zone"],
        },
    }
    distances = _distances(zones, notes)
    if distances is not None:
        out["numa_distances"] = distances
    return Conversion(NAME, out, origins, tuple(notes))


def _runtime(nodes: list[dict[str, Any]], notes: list[Note]) -> dict[str, Any]:
    """The kubelet and its container runtime, as the CHD's hypervisor section: type `other`, with
    what the kubelet's resource managers do (an NRT object is written for such nodes)."""
    capabilities = ["cpu_pinning"]
    if all("normal" in node["memory"] for node in nodes):
        capabilities += ["numa_memory_pinning", "hugepage_numa_pinning"]
    notes.append(
        Note(
            (),
            "the kubelet read as the hypervisor (type other) with "
            f"{', '.join(capabilities)}: the static CPU manager"
            + (" and the Static memory manager" if len(capabilities) > 1 else ""),
            ASSUMED,
        )
    )
    return {"type": "other", "capabilities": capabilities}


def zone_id(name: str) -> int | None:
    """`node-3` (the canonical name) or anything ending in digits -> 3; None otherwise."""
    found = re.search(r"(\d+)$", name)
    return int(found.group(1)) if found and len(found.group(1)) < 7 else None


def _zones(data: Mapping[str, Any], notes: list[Note]) -> list[tuple[int, PathKey, Any]]:
    """The `type: Node` zones as (NUMA id, path, zone), by id."""
    zones: list[tuple[int, PathKey, Any]] = []
    for index, raw in enumerate(as_list(data.get("zones"))):
        path: PathKey = ("zones", index)
        zone = as_mapping(raw)
        if zone.get("type") != "Node":
            notes.append(
                Note(path, f"zone of type {zone.get('type')!r} is not a NUMA node: not carried")
            )
            continue
        node_id = zone_id(str(zone.get("name", "")))
        if node_id is None:
            raise DialectError(
                f"zone name {zone.get('name')!r} names no NUMA node (expected 'node-<id>')",
                (*path, "name"),
            )
        for key in ("parent", "attributes"):
            if zone.get(key):
                notes.append(Note((*path, key), f"zone {key} not carried"))
        zones.append((node_id, path, zone))
    ids = [z[0] for z in zones]
    if not zones:
        raise DialectError("no zone of type Node (a NUMA node)", ("zones",))
    if len(ids) != len(set(ids)) or len(ids) > MAX_ZONES:
        raise DialectError(f"NUMA zones must be unique and at most {MAX_ZONES}: {ids}", ("zones",))
    return sorted(zones, key=lambda z: z[0])


def _counts(raw: Any, path: PathKey, whole_unit: int = 1) -> tuple[int, int, int]:
    """(capacity, allocatable, available) in units of `whole_unit`, rounded down; checked."""
    item = as_mapping(raw)
    values = []
    for key in ("capacity", "allocatable", "available"):
        quantity = parse_quantity(item.get(key), f"{item.get('name')} {key}", (*path, key))
        values.append(int(quantity / whole_unit))
    capacity, allocatable, available = values
    if not capacity >= allocatable >= available:
        raise DialectError(
            f"{item.get('name')}: need capacity >= allocatable >= available, got "
            f"{capacity} >= {allocatable} >= {available}",
            path,
        )
    return capacity, allocatable, available


def _node(
    node_id: int,
    zone: Mapping[str, Any],
    path: PathKey,
    first_cpu: int,
    pools: dict[str, float] | None,
    notes: list[Note],
) -> dict[str, Any]:
    node: dict[str, Any] = {"id": node_id, "cpus": [], "memory": {"total_mib": 0}}
    pages: list[dict[str, Any]] = []
    devices: list[tuple[str, PathKey, Any]] = []
    for index, raw in enumerate(as_list(zone.get("resources"))):
        where: PathKey = (*path, "resources", index)
        name = str(as_mapping(raw).get("name", ""))
        if name == "cpu":
            node["cpus"] = _cpus(raw, where, first_cpu, notes)
        elif name == "memory":
            capacity, allocatable, available = _counts(raw, where, MIB)
            node["memory"]["normal"] = {
                "reserved_mib": capacity - allocatable,
                "used_mib": allocatable - available,
            }
            node["memory"]["total_mib"] += capacity
        elif is_hugepages(name):
            size = page_size_bytes(name, (*where, "name"))
            _, allocatable, available = _counts(raw, where, size)
            pages.append(
                {"size_kib": size // 1024, "total": allocatable, "used": allocatable - available}
            )
            node["memory"]["total_mib"] += allocatable * size // MIB
        elif is_device(name):
            devices.append((name, where, raw))
        else:
            notes.append(Note(where, f"resource {name!r} is not placed per NUMA node: not carried"))
    if "normal" not in node["memory"]:
        notes.append(
            Note(
                path,
                "the zone reports no memory (the kubelet's memory manager is not Static): its "
                "normal memory is read as 0 MiB, and the kubelet does not align pods' memory",
                ASSUMED,
            )
        )
    node["memory"]["hugepages"] = sorted(pages, key=lambda p: p["size_kib"])
    _devices(node, node_id, devices, pools, notes)
    return node


def _cpus(raw: Any, path: PathKey, first: int, notes: list[Note]) -> list[dict[str, Any]]:
    capacity, allocatable, available = _counts(raw, path)
    item = as_mapping(raw)
    if any(
        parse_quantity(item.get(k), "cpu", path).denominator != 1
        for k in ("capacity", "allocatable", "available")
    ):
        notes.append(Note(path, "fractions of a CPU read as whole CPUs, rounded down", ASSUMED))
    if first + capacity > MAX_CPUS:
        raise DialectError(f"the node has more than {MAX_CPUS} CPUs", path)
    cpus = []
    for k in range(capacity):
        pu = first + k
        cpu: dict[str, Any] = {"id": pu, "core": pu, "siblings": [pu]}
        if k < capacity - allocatable:
            cpu["eligible"] = False
        elif k < capacity - available:
            cpu.update(state="dedicated", owner=IN_USE)
        cpus.append(cpu)
    return cpus


def vf_pools(text: Any, path: PathKey) -> dict[str, float]:
    """`nfvplace.io/vf-pools: "intel.com/sriov_a=25,intel.com/sriov_b"`: resource -> port speed
    in Gbps (0 when not given)."""
    pools: dict[str, float] = {}
    for part in (p.strip() for p in str(text).split(",") if p.strip()):
        name, _, speed = part.partition("=")
        try:
            pools[name.strip()] = float(speed) if speed else 0.0
        except ValueError:
            raise DialectError(f"{part!r}: write 'resource=speed in Gbps'", path) from None
        if not 0 <= pools[name.strip()] <= 1e6:
            raise DialectError(f"{part!r}: the speed must be 0 to 1000000 Gbps", path)
    return pools


def is_vf_pool(name: str, pools: Mapping[str, float] | None) -> bool:
    """Whether a device resource is an SR-IOV VF pool: named in the pools, else by its name."""
    if pools is not None:
        return name in pools
    return re.search(r"sriov|(^|[^a-z])vfs?([^a-z]|$)", name.split("/", 1)[-1].lower()) is not None


def _address(node_id: int, resource: int, device: int) -> str:
    """A synthesised PCI address: domain `fe<zone>`, one bus per 256 devices of a resource."""
    bus = resource * 8 + device // 256
    return f"fe{node_id:02x}:{bus:02x}:{device // 8 % 32:02x}.{device % 8}"


def _devices(
    node: dict[str, Any],
    node_id: int,
    devices: list[tuple[str, PathKey, Any]],
    pools: dict[str, float] | None,
    notes: list[Note],
) -> None:
    ports, pci = [], []
    for index, (name, path, raw) in enumerate(devices):
        _, allocatable, available = _counts(raw, path)
        if allocatable > MAX_DEVICES or index >= 32:
            raise DialectError(
                f"{name}: at most {MAX_DEVICES} devices of 32 resources per zone", path
            )
        used = allocatable - available
        if is_vf_pool(name, pools):
            speed = (pools or {}).get(name, 0.0)
            vfs = [
                {"pci_address": _address(node_id, index, 1 + k)}
                | ({"in_use": True, "owner": IN_USE} if k < used else {})
                for k in range(allocatable)
            ]
            ports.append(
                {
                    "pci_address": _address(node_id, index, 0),
                    "speed_gbps": speed,
                    "usage": "sriov",
                    "physical_network": name,
                    "sriov_total_vfs": allocatable,
                    "vfs": vfs,
                }
            )
            how = f"an SR-IOV VF pool: one port, {allocatable} VFs" + (
                "" if speed else "; port speed unknown (give it in nfvplace.io/vf-pools)"
            )
        else:
            pci += [
                {
                    "pci_address": _address(node_id, index, k),
                    "class": "gpu" if "gpu" in name.lower() else "other",
                    "vendor": name.split("/", 1)[0],
                    "model": name,
                }
                | ({"in_use": True, "owner": IN_USE} if k < used else {})
                for k in range(allocatable)
            ]
            how = f"{allocatable} PCI device(s) of model {name!r}"
        notes.append(Note(path, f"device resource {name!r} read as {how}", ASSUMED))
    if ports:
        node["nics"] = [{"vendor": "unknown", "model": "SR-IOV VF pools", "ports": ports}]
    if pci:
        node["pci_devices"] = pci


def _distances(zones: list[tuple[int, PathKey, Any]], notes: list[Note]) -> list[list[int]] | None:
    ids = [z[0] for z in zones]
    rows = []
    for _, path, zone in zones:
        costs = {}
        for index, raw in enumerate(as_list(zone.get("costs"))):
            cost = as_mapping(raw)
            other = zone_id(str(cost.get("name", "")))
            value = parse_quantity(cost.get("value"), "cost value", (*path, "costs", index))
            costs[other] = int(value)
        if not costs:
            return None
        if set(costs) != set(ids):
            notes.append(Note((*path, "costs"), "costs do not name every NUMA zone: not carried"))
            return None
        rows.append([costs[j] for j in ids])
    return rows
