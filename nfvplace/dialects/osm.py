"""OSM information model and ETSI SOL006 VNF descriptors: VDUs with their guest EPA.

Reads the OSM IM `guest-epa` of each VDU (`cpu-pinning-policy`, `cpu-thread-pinning-policy`,
`mempage-size`, `numa-node-policy` with per-node vCPUs, memory and paired threads) and the same
items in SOL006's `virtual-compute-desc` (`virtual-cpu.pinning`, `virtual-memory.numa-node-policy`).
One VDU gives a VM Descriptor; several give a VNF template with one inline member per VDU.
The CPUs and memory are read in `osm_compute` (cpu-sets in `osm_numa`), the other EPA parts in
`epa_extras`, the deployment flavours in `flavours`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from . import epa_extras
from .base import (
    ASSUMED,
    Conversion,
    DialectError,
    Note,
    as_list,
    as_mapping,
    identifier,
    nest_origins,
    parse_count,
    vnf_template,
)
from .flavours import read_df
from .osm_compute import compute_vm, vdu_epa

NAME = "osm-sol006"

INTERFACE_MODE = {
    "sr-iov": "sriov",
    "sriov": "sriov",
    "pci-passthrough": "dedicated",
    "passthrough": "dedicated",
    "paravirt": "vswitch",
    "virtio": "vswitch",
    "e1000": "vswitch",
    "om-mgmt": "vswitch",
}


def _vnfd(data: Mapping[str, Any]) -> tuple[Mapping[str, Any], PathKey] | None:
    for key in ("vnfd-catalog", "vnfd:vnfd-catalog"):
        catalog = data.get(key)
        if isinstance(catalog, Mapping):
            vnfds = as_list(catalog.get("vnfd"))
            if vnfds and isinstance(vnfds[0], Mapping):
                return vnfds[0], (key, "vnfd", 0)
    for key in ("nfv", "etsi-nfv-descriptors:nfv"):
        vnfds = as_list(as_mapping(data.get(key)).get("vnfd"))
        if vnfds and isinstance(vnfds[0], Mapping):
            return vnfds[0], (key, "vnfd", 0)
    for key in ("vnfd", "etsi-nfv-vnf:vnf", "etsi-nfv-vnfd:vnfd"):
        value = data.get(key)
        if isinstance(value, Mapping):
            return value, (key,)
        if isinstance(value, list) and value and isinstance(value[0], Mapping):
            return value[0], (key, 0)
    if isinstance(data.get("vdu"), list):
        return data, ()
    return None


def detect(data: Mapping[str, Any]) -> bool:
    found = _vnfd(data)
    return found is not None and isinstance(found[0].get("vdu"), list)


def convert(data: Mapping[str, Any]) -> Conversion:
    found = _vnfd(data)
    if found is None:
        raise DialectError("no 'vnfd' with a 'vdu' list")
    vnfd, base = found
    vdus = [v for v in as_list(vnfd.get("vdu")) if isinstance(v, Mapping)]
    if not vdus:
        raise DialectError("the VNFD has no VDU", (*base, "vdu"))
    compute = {
        str(c.get("id")): (c, (*base, "virtual-compute-desc", i))
        for i, c in enumerate(as_list(vnfd.get("virtual-compute-desc")))
        if isinstance(c, Mapping)
    }
    notes: list[Note] = []
    origins: dict[PathKey, PathKey] = {(): base}
    descriptors = []
    counts = [
        parse_count(vdu.get("count", 1), "count", (*base, "vdu", index, "count"))
        for index, vdu in enumerate(vdus)
    ]
    one_vm = counts == [1] or counts == [0]  # one VDU, one instance: a VM Descriptor
    for index, vdu in enumerate(vdus):
        vdu_path = (*base, "vdu", index)
        vm_origins: dict[PathKey, PathKey] = {}
        descriptors.append(_vdu(vdu, vdu_path, compute, vm_origins, notes))
        prefix: PathKey = () if one_vm else ("members", index, "descriptor")
        origins[prefix] = vdu_path
        nest_origins(origins, prefix, vm_origins)
    if one_vm:
        return Conversion(NAME, descriptors[0], origins, tuple(notes))
    if len(vdus) > 1:
        for key in ("internal-vld", "int-virtual-link-desc"):
            if key in vnfd:
                notes.append(Note((*base, key), f"'{key}' is not converted to VNF links"))
    template = vnf_template(
        identifier(vnfd.get("id") or vnfd.get("name"), "vnf"),
        [
            {"name": d["name"], "descriptor": d, **({"count": n} if n > 1 else {})}
            for d, n in zip(descriptors, counts, strict=True)
        ],
    )
    for key in ("vendor", "provider"):
        if vnfd.get(key):
            template["vendor"] = str(vnfd[key])
            break
    if vnfd.get("version"):
        template["version"] = str(vnfd["version"])
    for index, count in enumerate(counts):
        origins[("members", index)] = (*base, "vdu", index)
        if count > 1:
            origins[("members", index, "count")] = (*base, "vdu", index, "count")
    read_df(vnfd, base, template, [str(v.get("id")) for v in vdus], origins, notes)
    return Conversion(NAME, template, origins, tuple(notes))


def _vdu(
    vdu: Mapping[str, Any],
    vdu_path: PathKey,
    compute: Mapping[str, tuple[Mapping[str, Any], PathKey]],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> dict[str, Any]:
    epa, where, vcpus, memory, sizes = vdu_epa(vdu, vdu_path, compute)
    out: dict[str, Any] = {
        "schema": "nfvplace/vmd/v1",
        "name": identifier(vdu.get("id") or vdu.get("name"), "vdu"),
    }
    origins[("name",)] = (*vdu_path, "id")
    if vdu.get("description"):
        out["description"] = str(vdu["description"])

    compute_vm(epa, where, (vcpus, memory, sizes), vdu_path, out, origins, notes)
    sets = out.get("cpu_sets") or []
    interfaces, in_set = _interfaces(vdu, vdu_path, origins, notes, bool(sets), len(sets))
    if in_set:
        out["cpu_sets"][0]["interfaces"] = in_set
        out.setdefault("hypervisor", {})["required_capability_sets"] = ["io_virtualization"]
    if interfaces:
        out["interfaces"] = interfaces
    if "memory-gb" in sizes:
        notes.append(
            Note(
                sizes["memory-gb"],
                "virtual-memory size is in GB (SOL006); read as GiB, as NFV-PER 001 does",
                ASSUMED,
            )
        )
    if epa.get("storage-gb"):
        out["storage"] = [{"name": "root", "size_gib": epa["storage-gb"]}]
        origins[("storage", 0)] = sizes["storage"]
    epa_extras.read(vdu, vdu_path, epa, where, out, origins, notes)
    return out


def _interfaces(
    vdu: Mapping[str, Any],
    vdu_path: PathKey,
    origins: dict[PathKey, PathKey],
    notes: list[Note],
    has_sets: bool,
    set_count: int = 1,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    free: list[dict[str, Any]] = []
    in_set: list[dict[str, Any]] = []
    for index, raw in enumerate(as_list(vdu.get("interface"))):
        if not isinstance(raw, Mapping):
            continue
        path = (*vdu_path, "interface", index)
        virtual = as_mapping(raw.get("virtual-interface"))
        kind = str(virtual.get("type", raw.get("type", "PARAVIRT"))).lower()
        mode = INTERFACE_MODE.get(kind)
        if mode is None:
            notes.append(Note(path, f"interface type '{kind}' read as a vSwitch port"))
            mode = "vswitch"
        interface: dict[str, Any] = {
            "name": identifier(raw.get("name"), f"if{index}"),
            "mode": mode,
        }
        bandwidth = virtual.get("bandwidth")
        if isinstance(bandwidth, str):
            interface["bandwidth_gbps"] = bandwidth
        elif (
            isinstance(bandwidth, int | float) and not isinstance(bandwidth, bool) and bandwidth > 0
        ):
            interface["bandwidth_gbps"] = f"{bandwidth}bps"
        if mode != "vswitch" and "bandwidth_gbps" in interface:
            # OSM gives the bandwidth the VIM must find a port or VF for: the port speed needed.
            interface["speed_gbps"] = interface["bandwidth_gbps"]
        if mode != "vswitch" and has_sets:
            if set_count > 1:
                notes.append(
                    Note(
                        path,
                        f"{mode} interface '{interface['name']}' placed on the node of NUMA node "
                        "policy entry 0 (OSM does not say which node)",
                    )
                )
            origins[("cpu_sets", 0, "interfaces", len(in_set))] = path
            in_set.append(interface)
        else:
            origins[("interfaces", len(free))] = path
            free.append(interface)
    return free, in_set
