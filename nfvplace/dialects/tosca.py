"""ETSI GS NFV-SOL 001 TOSCA VNFDs: `tosca.nodes.nfv.Vdu.Compute` node templates.

Reads each VDU's `virtual_compute` capability (vCPU count and pinning policy, memory size) and
hugepage hints in `requested_additional_capabilities`. One VDU gives a VM Descriptor, several a
VNF template with inline members.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from ..models.units import QuantityError, parse_memory_kib, uses_decimal_memory_unit
from .base import (
    Conversion,
    DialectError,
    Note,
    as_mapping,
    identifier,
    page_size_kib,
    parse_count,
)

NAME = "sol001-tosca"
COMPUTE_TYPE = "tosca.nodes.nfv.Vdu.Compute"


def _templates(data: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], PathKey]]:
    nodes = as_mapping(as_mapping(data.get("topology_template")).get("node_templates"))
    return [
        (str(name), node, ("topology_template", "node_templates", name))
        for name, node in nodes.items()
        if isinstance(node, Mapping) and str(node.get("type", "")).endswith("Vdu.Compute")
    ]


def detect(data: Mapping[str, Any]) -> bool:
    return "tosca_definitions_version" in data


def _mib(value: Any, path: PathKey) -> int:
    try:
        text = str(value).replace(" ", "")
        kib = parse_memory_kib(text, "mib")
    except QuantityError as exc:
        raise DialectError(f"memory size {value!r}: {exc}", path) from None
    return kib // 1024


def convert(data: Mapping[str, Any]) -> Conversion:
    vdus = _templates(data)
    if not vdus:
        raise DialectError(f"no node template of type {COMPUTE_TYPE}", ("topology_template",))
    notes: list[Note] = []
    origins: dict[PathKey, PathKey] = {}
    descriptors = []
    for index, (name, node, path) in enumerate(vdus):
        prefix: PathKey = () if len(vdus) == 1 else ("members", index, "descriptor")
        origins[prefix] = path
        compute_path = (*path, "capabilities", "virtual_compute", "properties")
        compute = as_mapping(
            as_mapping(as_mapping(node.get("capabilities")).get("virtual_compute")).get(
                "properties"
            )
        )
        cpu = as_mapping(compute.get("virtual_cpu"))
        memory = as_mapping(compute.get("virtual_memory"))
        if "num_virtual_cpu" not in cpu or "virtual_mem_size" not in memory:
            raise DialectError(
                "the VDU gives no virtual_cpu.num_virtual_cpu or virtual_memory.virtual_mem_size",
                compute_path,
            )
        vcpus = parse_count(
            cpu["num_virtual_cpu"],
            "num_virtual_cpu",
            (*compute_path, "virtual_cpu", "num_virtual_cpu"),
        )
        mib = _mib(
            memory["virtual_mem_size"], (*compute_path, "virtual_memory", "virtual_mem_size")
        )
        if uses_decimal_memory_unit(str(memory["virtual_mem_size"]).replace(" ", "")):
            notes.append(
                Note(
                    (*compute_path, "virtual_memory", "virtual_mem_size"),
                    f"'{memory['virtual_mem_size']}' read with binary units (GB as GiB), as "
                    "NFV-PER 001 does; TOSCA defines GB as 10^9 bytes",
                )
            )
        props = as_mapping(node.get("properties"))
        vm: dict[str, Any] = {
            "schema": "nfvplace/vmd/v1",
            "name": identifier(props.get("name") or name, "vdu"),
        }
        if props.get("description"):
            vm["description"] = str(props["description"])
        pinning = as_mapping(cpu.get("virtual_cpu_pinning"))
        policy = str(pinning.get("virtual_cpu_pinning_policy", "dynamic")).lower()
        page_kib = None
        for extra in as_mapping(compute.get("requested_additional_capabilities")).values():
            props_extra = as_mapping(as_mapping(extra).get("target_performance_parameters"))
            for key, value in props_extra.items():
                if "mempage" in str(key).lower() or "page_size" in str(key).lower():
                    page_kib = page_size_kib(value)
        if policy == "static":
            cpu_set: dict[str, Any] = {"id": 0, "vcpus": list(range(vcpus)), "memory_mib": mib}
            if page_kib:
                cpu_set["hugepages"] = {"size": f"{page_kib}KiB", "count": mib * 1024 // page_kib}
            vm["cpu_sets"] = [cpu_set]
            required = ["cpu_pinning", "numa_memory_pinning"]
            if page_kib:
                required.append("hugepage_numa_pinning")
            vm["hypervisor"] = {"required_capabilities": required}
            origins[(*prefix, "cpu_sets")] = (*compute_path, "virtual_cpu", "virtual_cpu_pinning")
            origins[(*prefix, "cpu_sets", 0, "vcpus")] = (
                *compute_path,
                "virtual_cpu",
                "num_virtual_cpu",
            )
            origins[(*prefix, "cpu_sets", 0, "memory_mib")] = (
                *compute_path,
                "virtual_memory",
                "virtual_mem_size",
            )
        else:
            oversubscription = str(memory.get("virtual_mem_oversubscription_policy", "")).lower()
            vm.update({"vcpus": vcpus, "memory_mib": mib, "cpu_oversubscription": True})
            if oversubscription == "true":
                vm["memory_oversubscription"] = True
            origins[(*prefix, "vcpus")] = (*compute_path, "virtual_cpu", "num_virtual_cpu")
            origins[(*prefix, "memory_mib")] = (*compute_path, "virtual_memory", "virtual_mem_size")
        if memory.get("numa_enabled") and policy != "static":
            notes.append(
                Note(
                    (*compute_path, "virtual_memory"),
                    "numa_enabled without static pinning is not kept",
                )
            )
        descriptors.append(vm)
    if len(vdus) == 1:
        return Conversion(NAME, descriptors[0], origins, tuple(notes))
    metadata = as_mapping(data.get("metadata"))
    template = {
        "schema": "nfvplace/vnf/v1",
        "name": identifier(metadata.get("template_name") or metadata.get("name"), "vnf"),
        "members": [{"name": d["name"], "descriptor": d} for d in descriptors],
    }
    notes.append(
        Note(("topology_template",), "virtual links (VduCp, VnfVirtualLink) are not converted")
    )
    return Conversion(NAME, template, origins, tuple(notes))
