"""Tacker's legacy TOSCA-NFV VNFDs (`tosca_simple_profile_for_nfv_1_0_0`, `tosca.nodes.nfv.VDU.Tacker`).

Not SOL001: the compute is `capabilities.nfv_compute.properties` (`num_cpus`, `mem_size`,
`disk_size`, `mem_page_size`, `cpu_allocation`, `numa_node_count`, `numa_nodes`), which Tacker
translates to a Nova flavor. This reader does the same translation and reads the flavor with the
OpenStack reader, so both say the same thing; connection points (`tosca.nodes.nfv.CP.Tacker`)
with `type: sriov` become SR-IOV interfaces. A VDU that names an existing flavor (`flavor:`) says
no sizes: it is read with a note per missing item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from ..models.units import QuantityError, parse_memory_kib
from . import openstack
from .base import (
    ASSUMED,
    DROPPED,
    MISSING,
    Conversion,
    DialectError,
    Note,
    as_list,
    as_mapping,
    deepest_origin,
    identifier,
    members_of,
    nest_origins,
    one_of,
    vnf_template,
)
from .tosca import node_templates

NAME = "tacker-tosca-nfv"
VDU_TYPE = "tosca.nodes.nfv.VDU.Tacker"
CP_TYPE = "tosca.nodes.nfv.CP.Tacker"
CPU_AFFINITY = ("shared", "dedicated")
THREAD_ALLOCATION = {
    "avoid": "isolate",
    "separate": "isolate",
    "isolate": "isolate",
    "prefer": "prefer",
}
TOPOLOGY = {
    "socket_count": "hw:cpu_sockets",
    "core_count": "hw:cpu_cores",
    "thread_count": "hw:cpu_threads",
}


def detect(data: Mapping[str, Any]) -> bool:
    version = str(data.get("tosca_definitions_version", ""))
    return version.startswith("tosca_simple_profile_for_nfv") or any(
        as_mapping(node).get("type") == VDU_TYPE for node in node_templates(data).values()
    )


def _size(value: Any, unit: str, path: PathKey, default_unit: str = "mib") -> int:
    try:
        kib = parse_memory_kib(str(value).replace(" ", ""), default_unit)
    except QuantityError as exc:
        raise DialectError(f"size {value!r}: {exc}", path) from None
    return kib // (1024 if unit == "mib" else 1024 * 1024)


def convert(data: Mapping[str, Any]) -> Conversion:
    nodes = node_templates(data)
    vdus = [
        (str(n), as_mapping(v)) for n, v in nodes.items() if as_mapping(v).get("type") == VDU_TYPE
    ]
    if not vdus:
        raise DialectError(f"no node template of type {VDU_TYPE}", ("topology_template",))
    notes: list[Note] = []
    origins: dict[PathKey, PathKey] = {}
    descriptors = []
    for index, (name, node) in enumerate(vdus):
        prefix: PathKey = () if len(vdus) == 1 else ("members", index, "descriptor")
        path: PathKey = ("topology_template", "node_templates", name)
        vm, vm_origins = _vdu(name, node, path, notes)
        vm_interfaces(vm, vm_origins, nodes, name)
        descriptors.append(vm)
        origins[prefix] = path
        nest_origins(origins, prefix, vm_origins)
    if len(vdus) == 1:
        return Conversion(NAME, descriptors[0], origins, tuple(notes))
    metadata = as_mapping(data.get("metadata"))
    template = vnf_template(
        identifier(metadata.get("template_name"), "vnf"), members_of(descriptors)
    )
    return Conversion(NAME, template, origins, tuple(notes))


def _vdu(
    name: str, node: Mapping[str, Any], path: PathKey, notes: list[Note]
) -> tuple[dict[str, Any], dict[PathKey, PathKey]]:
    compute_path = (*path, "capabilities", "nfv_compute", "properties")
    compute = as_mapping(
        as_mapping(as_mapping(node.get("capabilities")).get("nfv_compute")).get("properties")
    )
    props = as_mapping(node.get("properties"))
    if not compute:
        return _by_flavor_name(name, props, path, notes)
    flavor: dict[str, Any] = {"name": name}
    where: dict[PathKey, PathKey] = {("name",): path}
    specs: dict[str, Any] = {}
    for key, target, unit in (
        ("num_cpus", "vcpus", ""),
        ("mem_size", "ram", "mib"),
        ("disk_size", "disk", "gib"),
    ):
        if key in compute:
            value = compute[key]
            flavor[target] = _size(value, unit, (*compute_path, key)) if unit else value
            where[(target,)] = (*compute_path, key)
        elif target != "disk":
            notes.append(
                Note(
                    (*compute_path,),
                    f"nfv_compute gives no {key}: the VM's size is unknown",
                    MISSING,
                )
            )
    if "mem_page_size" in compute:
        specs["hw:mem_page_size"] = compute["mem_page_size"]
        where[("extra_specs", "hw:mem_page_size")] = (*compute_path, "mem_page_size")
    _cpu_allocation(compute, compute_path, specs, where, notes)
    _numa(compute, compute_path, specs, where, notes)
    if "vcpus" not in flavor or "ram" not in flavor:
        return {"schema": "nfvplace/vmd/v1", "name": identifier(name, "vdu")}, {(): path}
    flavor["extra_specs"] = specs
    vm, origins, flavor_notes = openstack.convert_flavor(flavor, ())
    # A path in the Nova flavor Tacker would write, as the path in the Tacker file it came from.
    moved = {key: deepest_origin(source, where, compute_path) for key, source in origins.items()}
    notes.extend(
        Note(deepest_origin(n.path, where, compute_path), n.message, n.kind) for n in flavor_notes
    )
    return vm, moved


def _cpu_allocation(
    compute: Mapping[str, Any],
    compute_path: PathKey,
    specs: dict[str, Any],
    where: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    allocation = as_mapping(compute.get("cpu_allocation"))
    base = (*compute_path, "cpu_allocation")
    if "cpu_affinity" in allocation:
        affinity_path = (*base, "cpu_affinity")
        specs["hw:cpu_policy"] = one_of(
            allocation["cpu_affinity"], CPU_AFFINITY, "cpu_allocation.cpu_affinity", affinity_path
        )
        where[("extra_specs", "hw:cpu_policy")] = affinity_path
    if "thread_allocation" in allocation:
        thread_path = (*base, "thread_allocation")
        word = one_of(
            allocation["thread_allocation"],
            tuple(THREAD_ALLOCATION),
            "cpu_allocation.thread_allocation",
            thread_path,
        )
        specs["hw:cpu_thread_policy"] = THREAD_ALLOCATION[word]
        where[("extra_specs", "hw:cpu_thread_policy")] = thread_path
        notes.append(
            Note(
                thread_path,
                f"thread_allocation '{word}' read as thread policy '{THREAD_ALLOCATION[word]}'; "
                "Tacker writes it as 'hw:cpu_threads_policy', which Nova ignores (Nova then "
                "uses 'prefer')",
                ASSUMED,
            )
        )
    for key, spec in TOPOLOGY.items():
        if key in allocation:
            specs[spec] = allocation[key]
            where[("extra_specs", spec)] = (*base, key)


def _numa(
    compute: Mapping[str, Any],
    compute_path: PathKey,
    specs: dict[str, Any],
    where: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    layout = as_mapping(compute.get("numa_nodes"))
    if "numa_node_count" in compute:
        specs["hw:numa_nodes"] = compute["numa_node_count"]
        where[("extra_specs", "hw:numa_nodes")] = (*compute_path, "numa_node_count")
        if layout:
            notes.append(
                Note(
                    (*compute_path, "numa_nodes"),
                    "numa_nodes is not carried: numa_node_count is also given and wins, as in "
                    "Tacker's translation",
                    DROPPED,
                )
            )
        return
    if not layout:
        return
    specs["hw:numa_nodes"] = len(layout)
    where[("extra_specs", "hw:numa_nodes")] = (*compute_path, "numa_nodes")
    for key, raw in layout.items():
        node = as_mapping(raw)
        node_path = (*compute_path, "numa_nodes", key)
        node_id = node.get("id", 0)
        if "vcpus" in node:
            specs[f"hw:numa_cpus.{node_id}"] = ",".join(str(v) for v in as_list(node["vcpus"]))
            where[("extra_specs", f"hw:numa_cpus.{node_id}")] = (*node_path, "vcpus")
        if "mem_size" in node:
            specs[f"hw:numa_mem.{node_id}"] = node["mem_size"]
            where[("extra_specs", f"hw:numa_mem.{node_id}")] = (*node_path, "mem_size")


def _by_flavor_name(
    name: str, props: Mapping[str, Any], path: PathKey, notes: list[Note]
) -> tuple[dict[str, Any], dict[PathKey, PathKey]]:
    flavor = props.get("flavor")
    where = (*path, "properties", "flavor") if flavor else path
    what = f"names the flavor '{flavor}'" if flavor else "has no nfv_compute and no flavor"
    notes.append(
        Note(
            where,
            f"VDU '{name}' {what}: its vCPUs, memory, CPU policy and page size are not in the file",
            MISSING,
        )
    )
    return {"schema": "nfvplace/vmd/v1", "name": identifier(name, "vdu")}, {(): path}


def vm_interfaces(
    vm: dict[str, Any], origins: dict[PathKey, PathKey], nodes: Mapping[str, Any], vdu: str
) -> None:
    """The Tacker CPs bound to `vdu`, as interfaces (SR-IOV for `type: sriov`)."""
    interfaces: list[dict[str, Any]] = []
    for cp_name, raw in nodes.items():
        cp = as_mapping(raw)
        if cp.get("type") != CP_TYPE:
            continue
        bound = [as_mapping(r).get("virtualBinding") for r in as_list(cp.get("requirements"))]
        if not any(as_mapping(b).get("node") == vdu or b == vdu for b in bound if b):
            continue
        props = as_mapping(cp.get("properties"))
        kind = str(props.get("type", "vnic")).lower()
        mode = {"sriov": "sriov", "vnic": "vswitch"}.get(kind)
        if mode is None:
            raise DialectError(
                f"CP type must be 'vnic' or 'sriov', got {props.get('type')!r}",
                ("topology_template", "node_templates", cp_name, "properties", "type"),
            )
        origins[("interfaces", len(interfaces))] = ("topology_template", "node_templates", cp_name)
        interfaces.append({"name": identifier(cp_name, "cp"), "mode": mode})
    if interfaces:
        vm["interfaces"] = interfaces
