"""OpenVIM / openmano descriptors: `numas` with paired threads, cores, 1 GiB-page memory, interfaces.

Accepts a VM or flavor with `numas` at the top level or under `extended`, and an openmano VNF
(`vnf: {VNFC: [...]}`), whose VNFCs become the inline members of a VNF template. OpenVIM gives the
memory of a NUMA entry in GiB of 1 GiB hugepages, and interfaces as `dedicated: "yes"` (whole
port, PCI passthrough), `"yes:sriov"` (an exclusive SR-IOV VF, no VLAN) or `"no"` (an SR-IOV VF that
OpenVIM tags with a VLAN). Plain vSwitch ports are the `bridge-ifaces`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import (
    MISSING,
    Conversion,
    DialectError,
    Note,
    as_list,
    as_mapping,
    identifier,
    is_placeholder,
    members_of,
    nest_origins,
    parse_count,
    parse_int,
    vnf_template,
)

NAME = "openvim"

DEDICATED = {
    "yes": "dedicated",
    "yes:sriov": "sriov",
    "no": "sriov",
    "true": "dedicated",
    "false": "sriov",
}


def _numas(item: Mapping[str, Any], path: PathKey) -> tuple[list[Any], PathKey] | None:
    if isinstance(item.get("numas"), list):
        return item["numas"], (*path, "numas")
    extended = item.get("extended")
    if isinstance(extended, Mapping) and isinstance(extended.get("numas"), list):
        return extended["numas"], (*path, "extended", "numas")
    return None


def _vnfcs(data: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], PathKey]]:
    vnf = data.get("vnf")
    if isinstance(vnf, Mapping) and isinstance(vnf.get("VNFC"), list):
        return [
            (c, ("vnf", "VNFC", i)) for i, c in enumerate(vnf["VNFC"]) if isinstance(c, Mapping)
        ]
    for key in ("server", "vm", "flavor"):
        inner = data.get(key)
        if isinstance(inner, Mapping) and _numas(inner, (key,)) is not None:
            return [(inner, (key,))]
    return [(data, ())] if _numas(data, ()) is not None else []


def detect(data: Mapping[str, Any]) -> bool:
    return any(_numas(item, path) is not None for item, path in _vnfcs(data))


def convert(data: Mapping[str, Any]) -> Conversion:
    vnfcs = _vnfcs(data)
    if not vnfcs:
        raise DialectError("no 'numas' list")
    notes: list[Note] = []
    origins: dict[PathKey, PathKey] = {}
    descriptors = []
    many = isinstance(data.get("vnf"), Mapping)
    for index, (item, path) in enumerate(vnfcs):
        vm_origins: dict[PathKey, PathKey] = {}
        descriptors.append(_vm(item, path, vm_origins, notes))
        prefix: PathKey = ("members", index, "descriptor") if many else ()
        origins[prefix] = path
        nest_origins(origins, prefix, vm_origins)
    if not many:
        return Conversion(NAME, descriptors[0], origins, tuple(notes))
    vnf = as_mapping(data.get("vnf"))
    template = vnf_template(identifier(vnf.get("name"), "vnf"), members_of(descriptors))
    if vnf.get("description"):
        template["description"] = str(vnf["description"])
    origins[()] = ("vnf",)
    links = _links(
        vnf,
        {str(c.get("name")): d["name"] for (c, _), d in zip(vnfcs, descriptors, strict=True)},
        origins,
        notes,
    )
    if links:
        template["links"] = links
    return Conversion(NAME, template, origins, tuple(notes))


def _links(
    vnf: Mapping[str, Any],
    members: Mapping[str, str],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> list[dict[str, Any]]:
    """openmano `internal-connections` between VNFCs as VNF links (member, interface)."""
    links: list[dict[str, Any]] = []
    for index, raw in enumerate(as_list(vnf.get("internal-connections"))):
        connection = as_mapping(raw)
        path = ("vnf", "internal-connections", index)
        endpoints = [
            {
                "member": members.get(str(e.get("VNFC")), str(e.get("VNFC"))),
                "interface": identifier(e.get("local_iface_name"), "if"),
            }
            for e in (as_mapping(x) for x in as_list(connection.get("elements")))
        ]
        if len(endpoints) < 2:
            notes.append(Note(path, "a connection with fewer than two elements is not a link"))
            continue
        origins[("links", len(links))] = path
        links.append(
            {"name": identifier(connection.get("name"), f"link{index}"), "endpoints": endpoints}
        )
    return links


def _count(numa: Mapping[str, Any], key: str, path: PathKey) -> int:
    """A count of a `numas` entry; 0 for a `${...}` placeholder (reported as missing)."""
    value = numa.get(key, 0)
    return 0 if is_placeholder(value) else parse_count(value, key, (*path, key))


def _plain(
    item: Mapping[str, Any],
    path: PathKey,
    out: dict[str, Any],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    """`numas: []` (or no `numas`, for an openmano VNFC) with `vcpus` and `ram` (MiB): a plain VM
    on shared CPUs, as OpenVIM runs it."""
    for key, target in (("vcpus", "vcpus"), ("ram", "memory_mib")):
        if key in item and not is_placeholder(item[key]):
            out[target] = parse_count(item[key], key, (*path, key), limit=1 << 40)
            origins[(target,)] = (*path, key)
        else:
            notes.append(
                Note(path, f"no 'numas' and no '{key}': the VM's size is unknown", MISSING)
            )
    out["cpu_oversubscription"] = True


def _vm(
    item: Mapping[str, Any], path: PathKey, origins: dict[PathKey, PathKey], notes: list[Note]
) -> dict[str, Any]:
    """One VM: pinned cpu-sets from `numas`, or (no `numas`, or none listed) a plain VM."""
    found = _numas(item, path)
    out: dict[str, Any] = {"schema": "nfvplace/vmd/v1", "name": identifier(item.get("name"), "vm")}
    origins[("name",)] = (*path, "name")
    if item.get("description"):
        out["description"] = str(item["description"])
    if found is None or not found[0]:
        _plain(item, path, out, origins, notes)
    else:
        _pinned(*found, out, origins, notes)
    interfaces = _bridges(item, path, origins)
    interfaces += _networks(item, path, origins, len(interfaces))
    if interfaces:
        out["interfaces"] = interfaces
    if found is not None and found[0]:
        for key in ("ram", "vcpus"):
            if key in item:
                notes.append(
                    Note(
                        (*path, key),
                        f"'{key}' is ignored when 'numas' is given (OpenVIM does the same)",
                    )
                )
    if "hostId" in item:
        notes.append(
            Note((*path, "hostId"), "a preferred host is not carried: nfvplace chooses the host")
        )
    if "disk" in item and not is_placeholder(item["disk"]):  # openmano: the image's disk, GiB
        size = parse_count(item["disk"], "disk (GiB)", (*path, "disk"), limit=1 << 30)
        out["storage"] = [{"name": "root", "size_gib": size}]
        origins[("storage", 0)] = (*path, "disk")
    return out


def _pinned(
    numas: list[Any],
    numas_path: PathKey,
    out: dict[str, Any],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    """`numas` entries as pinned cpu-sets, and the hypervisor capabilities they need."""
    cpu_sets = []
    next_vcpu = 0
    for index, numa in enumerate(numas):
        numa_path = (*numas_path, index)
        if not isinstance(numa, Mapping):
            raise DialectError("a 'numas' entry must be a mapping", numa_path)
        ids, pairs = _vcpu_ids(numa, numa_path, next_vcpu)
        if not ids:
            if any(is_placeholder(numa.get(k)) for k in ("paired-threads", "cores", "threads")):
                continue  # the placeholder is a MISSING note: nothing to convert here
            raise DialectError("a 'numas' entry needs paired-threads, cores or threads", numa_path)
        next_vcpu = max(ids) + 1
        cpu_sets.append(_cpu_set(numa, index, numa_path, (ids, pairs), origins, notes))
    out["cpu_sets"] = cpu_sets
    origins[("cpu_sets",)] = numas_path
    required = ["cpu_pinning", "numa_memory_pinning"]
    if any("hugepages" in cpu_set for cpu_set in cpu_sets):
        required.append("hugepage_numa_pinning")
    hypervisor: dict[str, Any] = {"required_capabilities": required}
    if any("interfaces" in cpu_set for cpu_set in cpu_sets):
        hypervisor["required_capability_sets"] = ["io_virtualization"]
    out["hypervisor"] = hypervisor
    origins[("hypervisor",)] = numas_path


def _vcpu_ids(
    numa: Mapping[str, Any], numa_path: PathKey, next_vcpu: int
) -> tuple[list[int], list[list[int]]]:
    """The vCPU ids of a `numas` entry (paired first, then cores and threads), and its pairs."""
    pairs_n = _count(numa, "paired-threads", numa_path)
    cores = _count(numa, "cores", numa_path)
    threads = _count(numa, "threads", numa_path)
    ids_given = numa.get("paired-threads-id")
    pairs: list[list[int]] = []
    if isinstance(ids_given, list):
        for p, pair in enumerate(ids_given):
            values = as_list(pair)
            if len(values) != 2:
                raise DialectError(
                    "each paired-threads-id entry is a pair [a, b]",
                    (*numa_path, "paired-threads-id", p),
                )
            pairs.append(
                [parse_int(v, "vCPU id", (*numa_path, "paired-threads-id", p)) for v in values]
            )
        paired_ids = [v for pair in pairs for v in pair]
    else:
        paired_ids = list(range(next_vcpu, next_vcpu + 2 * pairs_n))
        pairs = [paired_ids[i : i + 2] for i in range(0, len(paired_ids), 2)]
    start = max([next_vcpu, *(v + 1 for v in paired_ids)])
    return paired_ids + list(range(start, start + cores + threads)), pairs


def _cpu_set(
    numa: Mapping[str, Any],
    index: int,
    numa_path: PathKey,
    vcpus: tuple[list[int], list[list[int]]],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> dict[str, Any]:
    """One `numas` entry as a cpu-set: its vCPUs and pairs, 1 GiB pages, interfaces."""
    ids, pairs = vcpus
    memory_gib = _count(numa, "memory", numa_path)
    cpu_set: dict[str, Any] = {"id": index, "vcpus": ids, "memory_mib": memory_gib * 1024}
    if pairs:
        cpu_set["howtogroup"] = pairs
        given = isinstance(numa.get("paired-threads-id"), list)
        origins[("cpu_sets", index, "howtogroup")] = (
            *numa_path,
            "paired-threads-id" if given else "paired-threads",
        )
    if memory_gib:
        cpu_set["hugepages"] = {"size": "1GiB", "count": memory_gib}
        origins[("cpu_sets", index, "hugepages")] = (*numa_path, "memory")
    if _count(numa, "threads", numa_path):
        cpu_set["thread_policy"] = "prefer"
        notes.append(
            Note(
                (*numa_path, "threads"),
                "'threads' read as vCPUs that may share a core with other VMs (thread policy prefer)",
            )
        )
    interfaces = _numa_interfaces(numa, index, numa_path, origins)
    if interfaces:
        cpu_set["interfaces"] = interfaces
    origins[("cpu_sets", index)] = numa_path
    origins[("cpu_sets", index, "vcpus")] = numa_path
    origins[("cpu_sets", index, "memory_mib")] = (*numa_path, "memory")
    return cpu_set


def _numa_interfaces(
    numa: Mapping[str, Any], index: int, numa_path: PathKey, origins: dict[PathKey, PathKey]
) -> list[dict[str, Any]]:
    """The data-plane interfaces of a `numas` entry: passthrough ports or SR-IOV VFs."""
    interfaces = []
    for i, raw in enumerate(as_list(numa.get("interfaces"))):
        iface_path = (*numa_path, "interfaces", i)
        if not isinstance(raw, Mapping):
            raise DialectError("an interface must be a mapping", iface_path)
        dedicated = str(raw.get("dedicated", "no")).lower()
        mode = DEDICATED.get(dedicated)
        if mode is None:
            raise DialectError(
                f"dedicated must be 'yes', 'yes:sriov' or 'no', got {raw.get('dedicated')!r}",
                (*iface_path, "dedicated"),
            )
        interface: dict[str, Any] = {"name": identifier(raw.get("name"), f"if{i}"), "mode": mode}
        if raw.get("bandwidth") is not None:
            interface["bandwidth_gbps"] = str(raw["bandwidth"])
            interface["speed_gbps"] = str(raw["bandwidth"])
            origins[("cpu_sets", index, "interfaces", i, "bandwidth_gbps")] = (
                *iface_path,
                "bandwidth",
            )
        origins[("cpu_sets", index, "interfaces", i)] = iface_path
        interfaces.append(interface)
    return interfaces


def _bridges(
    item: Mapping[str, Any], path: PathKey, origins: dict[PathKey, PathKey]
) -> list[dict[str, Any]]:
    """openmano `bridge-ifaces`: virtio ports on the host's bridge (vSwitch interfaces)."""
    bridges: list[dict[str, Any]] = []
    for i, raw in enumerate(as_list(item.get("bridge-ifaces"))):
        if isinstance(raw, Mapping):
            bridge: dict[str, Any] = {
                "name": identifier(raw.get("name"), f"br{i}"),
                "mode": "vswitch",
            }
            if raw.get("bandwidth") is not None:
                bridge["bandwidth_gbps"] = str(raw["bandwidth"])
            origins[("interfaces", len(bridges))] = (*path, "bridge-ifaces", i)
            bridges.append(bridge)
    return bridges


def _networks(
    item: Mapping[str, Any], path: PathKey, origins: dict[PathKey, PathKey], start: int
) -> list[dict[str, Any]]:
    """An OpenVIM server's `networks`: its control-plane (virtio) ports, vSwitch interfaces too."""
    ports: list[dict[str, Any]] = []
    for i, raw in enumerate(as_list(item.get("networks"))):
        if isinstance(raw, Mapping):
            origins[("interfaces", start + len(ports))] = (*path, "networks", i)
            ports.append({"name": identifier(raw.get("name"), f"net{i}"), "mode": "vswitch"})
    return ports
