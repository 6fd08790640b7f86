"""OpenVIM host descriptors (`host-data: {numas: [{cores, hugepages, memory, interfaces}]}`) as CHDs.

Each `numas` entry is a NUMA node: its `cores` list gives the PUs (`core_id`, `thread_id`,
`status: noteligible`), `memory`/`hugepages` are GiB (hugepages are 1 GiB pages), and each
interface is a port (`Mbps`, `pci`) with its SR-IOV VFs (`sriovs`: `pci`, `vlan`). OpenVIM's
`features` become processor features. What an OpenVIM host file does not say (processor vendor
and model, hypervisor version) is listed under `provenance.unknown`, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import (
    ASSUMED,
    Conversion,
    DialectError,
    Note,
    as_list,
    as_mapping,
    identifier,
    parse_count,
)

NAME = "openvim-host"
FEATURES = {
    "lps": "large_pages",
    "dioc": "direct_cache_access",
    "hwsv": "hw_virtualization",
    "ht": "smt",
    "tlbps": "tlb_large_pages",
    "iommu": "iommu",
}
FLAGS = {"64b": "lm"}
CORES_PER_NODE = 1 << 16
OPENVIM_CAPABILITIES = [
    "cpu_pinning",
    "numa_memory_pinning",
    "hugepage_numa_pinning",
    "iommu",
    "iommu_large_pages",
    "interrupt_remapping",
]
"""What OpenVIM does on every compute node it manages: pinned, NUMA-local, 1 GiB-page VMs with
passthrough ports and SR-IOV VFs (which need the IOMMU with interrupt remapping)."""


def _host(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    host = data.get("host-data")
    if isinstance(host, Mapping) and isinstance(host.get("numas"), list):
        return host
    return None


def detect(data: Mapping[str, Any]) -> bool:
    host = _host(data)
    return host is not None and any(
        isinstance(n, Mapping) and "cores" in n for n in as_list(host.get("numas"))
    )


def convert(data: Mapping[str, Any]) -> Conversion:
    host = _host(data)
    if host is None:
        raise DialectError("no 'host-data' with a 'numas' list")
    base: PathKey = ("host-data",)
    notes: list[Note] = []
    origins: dict[PathKey, PathKey] = {(): base, ("id",): (*base, "name")}
    nodes: list[dict[str, Any]] = []
    for index, raw in enumerate(as_list(host.get("numas"))):
        path = (*base, "numas", index)
        node = _node(as_mapping(raw), path, notes)
        origins[("numa_nodes", len(nodes))] = path
        nodes.append(node)
    features, flags = _features(host, base, notes)
    unknown = ["processor.vendor", "processor.model", "hypervisor.version"]
    out: dict[str, Any] = {
        "schema": "nfvplace/chd/v1",
        "id": identifier(host.get("name") or as_mapping(data.get("host")).get("name"), "host"),
        "processor": {
            "vendor": "unknown",
            "model": "unknown",
            "features": features,
            "flags": flags,
        },
        "hypervisor": {
            "type": "kvm",
            "capabilities": OPENVIM_CAPABILITIES,
            "vswitch": {"type": "ovs"},
        },
        "numa_nodes": sorted(nodes, key=lambda n: int(n["id"])),
        "provenance": {
            "source": "manual",
            "tool": "openvim host descriptor",
            "unknown": unknown,
            "notes": ["converted from an OpenVIM host file by nfvplace"],
        },
    }
    notes.append(
        Note(
            base,
            "hypervisor read as KVM with CPU pinning, NUMA memory and 1 GiB-page pinning, IOMMU "
            "and interrupt remapping, and an OVS bridge for bridge interfaces: what OpenVIM "
            "needs on every compute node",
            ASSUMED,
        )
    )
    if host.get("ranking") is not None:
        notes.append(
            Note(
                (*base, "ranking"),
                "OpenVIM's host ranking is not carried: nfvplace ranks hosts itself",
            )
        )
    return Conversion(NAME, out, origins, tuple(notes))


def _features(
    host: Mapping[str, Any], base: PathKey, notes: list[Note]
) -> tuple[list[str], list[str]]:
    features: list[str] = []
    flags: list[str] = []
    for word in (w.strip() for w in str(host.get("features", "")).split(",") if w.strip()):
        if word in FEATURES:
            features.append(FEATURES[word])
        elif word in FLAGS:
            flags.append(FLAGS[word])
        else:
            notes.append(Note((*base, "features"), f"feature '{word}' has no nfvplace equivalent"))
    return features, flags


def _node(numa: Mapping[str, Any], path: PathKey, notes: list[Note]) -> dict[str, Any]:
    node_id = parse_count(numa.get("numa_socket", 0), "numa_socket", (*path, "numa_socket"))
    cores: dict[int, list[int]] = {}
    cpus = []
    for index, raw in enumerate(as_list(numa.get("cores"))):
        core = as_mapping(raw)
        where = (*path, "cores", index)
        thread = parse_count(core.get("thread_id"), "thread_id", (*where, "thread_id"), 1 << 20)
        core_id = parse_count(core.get("core_id"), "core_id", (*where, "core_id"), 1 << 20)
        cores.setdefault(core_id, []).append(thread)
        cpus.append(
            {
                "id": thread,
                "core": node_id * CORES_PER_NODE + core_id,  # OpenVIM numbers cores per socket
                "package": node_id,
                "eligible": core.get("status") != "noteligible",
            }
        )
    for cpu in cpus:
        siblings = cores[cpu["core"] - node_id * CORES_PER_NODE]
        cpu["siblings"] = sorted(siblings)
    memory = parse_count(numa.get("memory", 0), "memory (GiB)", (*path, "memory"), 1 << 30)
    pages = parse_count(numa.get("hugepages", 0), "hugepages (GiB)", (*path, "hugepages"), 1 << 30)
    node: dict[str, Any] = {
        "id": node_id,
        "cpus": sorted(cpus, key=lambda c: c["id"]),
        "memory": {
            "total_mib": memory * 1024,
            "hugepages": [{"size_kib": 1024 * 1024, "total": pages}] if pages else [],
        },
    }
    ports = [
        _port(as_mapping(raw), (*path, "interfaces", i))
        for i, raw in enumerate(as_list(numa.get("interfaces")))
    ]
    if ports:
        node["nics"] = [{"vendor": "unknown", "model": "unknown", "ports": ports}]
        notes.append(
            Note(
                (*path, "interfaces"),
                "NIC vendor and model are not in OpenVIM host files: read as 'unknown'",
                ASSUMED,
            )
        )
    return node


def _port(interface: Mapping[str, Any], path: PathKey) -> dict[str, Any]:
    mbps = parse_count(interface.get("Mbps", 0), "Mbps", (*path, "Mbps"), 1 << 30)
    port: dict[str, Any] = {
        "pci_address": str(interface.get("pci")),
        "speed_gbps": mbps / 1000,
    }
    if interface.get("source_name"):
        port["name"] = str(interface["source_name"])
    vfs = []
    for index, raw in enumerate(as_list(interface.get("sriovs"))):
        vf = as_mapping(raw)
        entry: dict[str, Any] = {"pci_address": str(vf.get("pci"))}
        if vf.get("vlan") is not None:
            entry["vlan"] = parse_count(vf["vlan"], "vlan", (*path, "sriovs", index, "vlan"))
        vfs.append(entry)
    if vfs:
        port["vfs"] = vfs
        port["sriov_total_vfs"] = len(vfs)
    return port
