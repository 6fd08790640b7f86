"""ETSI GS NFV-SOL 001 TOSCA VNFDs: `tosca.nodes.nfv.Vdu.Compute` node templates and their `VduCp`s.

Each VDU's `virtual_compute` capability gives the vCPU count, pinning policy and memory size; the
Nova extra specs Tacker carries in `requested_additional_capabilities` (`target_performance_parameters`
with `hw:` keys) or in `nova_extra_specs` are read with the OpenStack flavor reader, so both say
the same thing. Connection points bound to the VDU become interfaces (`vnic_type: direct` an
SR-IOV VF, `direct-physical` a passthrough port). One VDU gives a VM Descriptor, several a VNF
template with inline members (and the `AntiAffinityRule` policies of scope `nfvi_node`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from ..models.units import QuantityError, parse_memory_kib, uses_decimal_memory_unit
from . import openstack
from .base import (
    ASSUMED,
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

NAME = "sol001-tosca"
COMPUTE_TYPE = "tosca.nodes.nfv.Vdu.Compute"
CP_TYPE = "tosca.nodes.nfv.VduCp"
PINNING = ("static", "dynamic")
VNIC_TYPES = {
    "normal": "vswitch",
    "virtio": "vswitch",
    "virtio-forwarder": "vswitch",
    "direct": "sriov",
    "macvtap": "sriov",
    "direct-physical": "dedicated",
}


def node_templates(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `topology_template.node_templates` of a TOSCA document (empty if absent)."""
    return as_mapping(as_mapping(data.get("topology_template")).get("node_templates"))


def detect(data: Mapping[str, Any]) -> bool:
    return "tosca_definitions_version" in data


def _mib(value: Any, path: PathKey) -> int:
    try:
        kib = parse_memory_kib(str(value).replace(" ", ""), "mib")
    except QuantityError as exc:
        raise DialectError(f"memory size {value!r}: {exc}", path) from None
    return kib // 1024


def convert(data: Mapping[str, Any]) -> Conversion:
    nodes = node_templates(data)
    vdus = [
        (str(n), as_mapping(v))
        for n, v in nodes.items()
        if str(as_mapping(v).get("type", "")).endswith("Vdu.Compute")
    ]
    if not vdus:
        raise DialectError(f"no node template of type {COMPUTE_TYPE}", ("topology_template",))
    notes: list[Note] = []
    origins: dict[PathKey, PathKey] = {}
    descriptors = []
    for index, (name, node) in enumerate(vdus):
        path: PathKey = ("topology_template", "node_templates", name)
        prefix: PathKey = () if len(vdus) == 1 else ("members", index, "descriptor")
        vm, vm_origins = _vdu(name, node, path, notes)
        _connection_points(vm, vm_origins, nodes, name, notes)
        descriptors.append(vm)
        origins[prefix] = path
        nest_origins(origins, prefix, vm_origins)
    if len(vdus) == 1:
        return Conversion(NAME, descriptors[0], origins, tuple(notes))
    metadata = as_mapping(data.get("metadata"))
    template = vnf_template(
        identifier(metadata.get("template_name") or metadata.get("name"), "vnf"),
        members_of(descriptors),
    )
    _policies(data, [n for n, _ in vdus], template, origins, notes)
    notes.append(
        Note(("topology_template",), "virtual links (VnfVirtualLink) are not converted to links")
    )
    return Conversion(NAME, template, origins, tuple(notes))


def _extra_specs(
    compute: Mapping[str, Any], compute_path: PathKey, props: Mapping[str, Any], notes: list[Note]
) -> tuple[dict[str, Any], dict[str, PathKey]]:
    """Nova extra specs carried by the VDU, with the path of each, and notes on the rest."""
    specs: dict[str, Any] = {}
    where: dict[str, PathKey] = {}
    extra_path = (*compute_path, "requested_additional_capabilities")
    extra = as_mapping(compute.get("requested_additional_capabilities"))
    entries = {"": extra} if "properties" in extra else extra
    for key, raw in entries.items():
        entry = as_mapping(as_mapping(raw).get("properties", raw))
        base = (*extra_path, key, "properties") if key else (*extra_path, "properties")
        params = as_mapping(entry.get("target_performance_parameters"))
        for name, value in params.items():
            at = (*base, "target_performance_parameters", name)
            if ":" in str(name):
                specs[str(name)], where[str(name)] = value, at
            else:
                notes.append(Note(at, f"target performance parameter '{name}' is not read"))
        flavor = entry.get("requested_additional_capability_name")
        if flavor is not None:
            notes.append(
                Note(
                    (*base, "requested_additional_capability_name"),
                    f"'{flavor}' names a flavor or capability outside the file: extra specs it "
                    "may add are not known",
                    ASSUMED,
                )
            )
    for holder, holder_path in ((props, ()), (compute, compute_path)):
        nova = as_mapping(holder.get("nova_extra_specs"))
        for name, value in nova.items():
            specs[str(name)] = value
            where[str(name)] = (*holder_path, "nova_extra_specs", name)
    return specs, where


def _vdu(
    name: str, node: Mapping[str, Any], path: PathKey, notes: list[Note]
) -> tuple[dict[str, Any], dict[PathKey, PathKey]]:
    compute_path = (*path, "capabilities", "virtual_compute", "properties")
    capabilities = as_mapping(node.get("capabilities"))
    compute = as_mapping(as_mapping(capabilities.get("virtual_compute")).get("properties"))
    props = as_mapping(node.get("properties"))
    cpu = as_mapping(compute.get("virtual_cpu"))
    memory = as_mapping(compute.get("virtual_memory"))
    vm_name = identifier(props.get("name") or name, "vdu")
    specs, where = _extra_specs(compute, compute_path, {**props}, notes)
    where = {
        k: (*path, "properties", *v) if v[:1] == ("nova_extra_specs",) else v
        for k, v in where.items()
    }
    cpu_path = (*compute_path, "virtual_cpu", "num_virtual_cpu")
    mem_path = (*compute_path, "virtual_memory", "virtual_mem_size")
    if "num_virtual_cpu" not in cpu or "virtual_mem_size" not in memory:
        notes.append(
            Note(
                compute_path,
                "the VDU gives no virtual_cpu.num_virtual_cpu or virtual_memory.virtual_mem_size",
                MISSING,
            )
        )
        return {"schema": "nfvplace/vmd/v1", "name": vm_name}, {(): path}
    if uses_decimal_memory_unit(str(memory["virtual_mem_size"]).replace(" ", "")):
        notes.append(
            Note(
                mem_path,
                f"'{memory['virtual_mem_size']}' read with binary units (GB as GiB), as "
                "NFV-PER 001 does; TOSCA defines GB as 10^9 bytes",
                ASSUMED,
            )
        )
    _static_pinning(cpu, compute_path, specs, where)
    if memory.get("numa_enabled") and "hw:numa_nodes" not in specs:
        # a guest NUMA topology of one node (floating cpu-set when the vCPUs are not pinned)
        specs["hw:numa_nodes"] = "1"
        where["hw:numa_nodes"] = (*compute_path, "virtual_memory", "numa_enabled")
    flavor = {
        "name": vm_name,
        "vcpus": cpu["num_virtual_cpu"],
        "ram": _mib(memory["virtual_mem_size"], mem_path),
        "extra_specs": specs,
    }
    vm, origins, flavor_notes = openstack.convert_flavor(flavor, ())
    if str(memory.get("virtual_mem_oversubscription_policy", "")).lower() == "true":
        vm["memory_oversubscription"] = True
    if props.get("description"):
        vm["description"] = str(props["description"])
    sources: dict[PathKey, PathKey] = {("vcpus",): cpu_path, ("ram",): mem_path, ("name",): path}
    sources.update({("extra_specs", k): v for k, v in where.items()})
    notes.extend(
        Note(deepest_origin(n.path, sources, compute_path), n.message, n.kind) for n in flavor_notes
    )
    return vm, {key: deepest_origin(s, sources, compute_path) for key, s in origins.items()}


def _static_pinning(
    cpu: Mapping[str, Any], compute_path: PathKey, specs: dict[str, Any], where: dict[str, PathKey]
) -> None:
    """`virtual_cpu_pinning_policy: static` is `hw:cpu_policy: dedicated` (unless a spec says)."""
    pinning = as_mapping(cpu.get("virtual_cpu_pinning"))
    pin_path = (*compute_path, "virtual_cpu", "virtual_cpu_pinning", "virtual_cpu_pinning_policy")
    if "virtual_cpu_pinning_policy" in pinning:
        policy = one_of(
            pinning["virtual_cpu_pinning_policy"], PINNING, "virtual_cpu_pinning_policy", pin_path
        )
        if policy == "static" and "hw:cpu_policy" not in specs:
            specs["hw:cpu_policy"], where["hw:cpu_policy"] = "dedicated", pin_path


def _connection_points(
    vm: dict[str, Any],
    origins: dict[PathKey, PathKey],
    nodes: Mapping[str, Any],
    vdu: str,
    notes: list[Note],
) -> None:
    """The VduCps bound to `vdu` (virtual_binding), as interfaces."""
    interfaces = list(vm.get("interfaces", []))
    for cp_name, raw in nodes.items():
        cp = as_mapping(raw)
        if not str(cp.get("type", "")).endswith("VduCp"):
            continue
        bindings = [as_mapping(r).get("virtual_binding") for r in as_list(cp.get("requirements"))]
        if vdu not in [as_mapping(b).get("node", b) for b in bindings if b]:
            continue
        path: PathKey = ("topology_template", "node_templates", cp_name, "properties")
        props = as_mapping(cp.get("properties"))
        vnic = one_of(
            props.get("vnic_type", "normal"), tuple(VNIC_TYPES), "vnic_type", (*path, "vnic_type")
        )
        interface: dict[str, Any] = {"name": identifier(cp_name, "cp"), "mode": VNIC_TYPES[vnic]}
        bitrate = props.get("bitrate_requirement")
        if isinstance(bitrate, int) and not isinstance(bitrate, bool) and bitrate > 0:
            interface["bandwidth_gbps"] = f"{bitrate}bps"
        origins[("interfaces", len(interfaces))] = (*path, "vnic_type")
        interfaces.append(interface)
    if interfaces:
        vm["interfaces"] = interfaces
        if any(i["mode"] != "vswitch" for i in interfaces):
            vm.setdefault("hypervisor", {}).setdefault(
                "required_capability_sets", ["io_virtualization"]
            )


def _policies(
    data: Mapping[str, Any],
    vdus: list[str],
    template: dict[str, Any],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    """`tosca.policies.nfv.AntiAffinityRule` of scope nfvi_node between VDUs: anti-affinity."""
    names = {vdu: template["members"][i]["name"] for i, vdu in enumerate(vdus)}
    topology = as_mapping(data.get("topology_template"))
    groups = {
        str(k): as_list(as_mapping(g).get("members"))
        for k, g in as_mapping(topology.get("groups")).items()
    }
    anti: list[dict[str, Any]] = []
    for index, raw in enumerate(as_list(as_mapping(data.get("topology_template")).get("policies"))):
        for policy_name, body in as_mapping(raw).items():
            policy = as_mapping(body)
            path = ("topology_template", "policies", index, policy_name)
            kind = str(policy.get("type", ""))
            if not kind.endswith(("AntiAffinityRule", "AffinityRule")):
                continue
            scope = str(as_mapping(policy.get("properties")).get("scope", ""))
            targets = [m for t in as_list(policy.get("targets")) for m in groups.get(str(t), [t])]
            members = [names[t] for t in targets if t in names]
            if kind.endswith("AntiAffinityRule") and scope == "nfvi_node" and len(members) >= 2:
                origins[("anti_affinity", len(anti))] = path
                anti.append({"members": members})
            else:
                notes.append(
                    Note(
                        path,
                        f"{kind.rpartition('.')[2]} of scope '{scope}' on {len(members)} VDU(s) not carried: nfvplace keeps anti-affinity between hosts of two or more VDUs",
                    )
                )
    if anti:
        template["anti_affinity"] = anti
