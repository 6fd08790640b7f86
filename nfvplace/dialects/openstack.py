"""OpenStack Nova flavors with extra specs (`hw:cpu_policy`, `hw:numa_nodes`, `hw:mem_page_size`...).

Accepts `{flavor: {...}}`, a bare flavor, or the output of `openstack flavor show -f yaml|json`
(`properties` as a mapping or as the `k='v', ...` string). Dedicated-CPU flavors become cpu-sets,
one per guest NUMA node; shared flavors become plain cloud VMs that allow oversubscription.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import (
    Conversion,
    DialectError,
    Note,
    identifier,
    page_size_kib,
    parse_count,
    parse_cpu_list,
    parse_int,
)

NAME = "openstack-flavor"
SPEC_KEYS = ("extra_specs", "properties", "extra-specs")
IGNORED_NAMESPACES = ("aggregate_instance_extra_specs:", "trait:", "resources:", "quota:")
TRUE = {"true", "yes", "1", "on"}
HANDLED = {
    "hw:cpu_policy",
    "hw:cpu_thread_policy",
    "hw:emulator_threads_policy",
    "hw:mem_page_size",
    "hw:numa_nodes",
    "hw:cpu_realtime",
    "hw:cpu_realtime_mask",
    "hw:cpu_dedicated_mask",
    "pci_passthrough:alias",
}


def _flavor(data: Mapping[str, Any]) -> tuple[Mapping[str, Any], PathKey]:
    inner = data.get("flavor")
    if isinstance(inner, Mapping):
        return inner, ("flavor",)
    return data, ()


def _spec_key(flavor: Mapping[str, Any]) -> str | None:
    return next((k for k in SPEC_KEYS if k in flavor), None)


def detect(data: Mapping[str, Any]) -> bool:
    flavor, _ = _flavor(data)
    return (
        "vcpus" in flavor
        and "ram" in flavor
        and (
            _spec_key(flavor) is not None
            or "flavor" in data
            or "OS-FLV-EXT-DATA:ephemeral" in flavor
        )
    )


def _specs(flavor: Mapping[str, Any], key: str | None) -> dict[str, str]:
    raw = flavor.get(key) if key else None
    if isinstance(raw, Mapping):
        return {str(k): str(v) for k, v in raw.items()}
    if isinstance(raw, str):
        return dict(re.findall(r"([\w:.\-]+)='([^']*)'", raw))
    return {}


def convert(data: Mapping[str, Any]) -> Conversion:
    flavor, base = _flavor(data)
    key = _spec_key(flavor)
    specs = _specs(flavor, key)
    spec_path = (*base, key) if key else base

    def at(name: str) -> PathKey:
        return (*spec_path, name) if isinstance(flavor.get(key or ""), Mapping) else spec_path

    vcpus = parse_count(flavor.get("vcpus"), "vcpus", (*base, "vcpus"))
    ram = parse_int(flavor.get("ram"), "ram (MiB)", (*base, "ram"))
    if vcpus <= 0:
        raise DialectError(f"vcpus must be positive, got {vcpus}", (*base, "vcpus"))
    notes: list[Note] = []
    origins: dict[PathKey, PathKey] = {
        (): base,
        ("name",): (*base, "name"),
        ("vcpus",): (*base, "vcpus"),
        ("memory_mib",): (*base, "ram"),
    }
    out: dict[str, Any] = {
        "schema": "nfvplace/vmd/v1",
        "name": identifier(flavor.get("name") or flavor.get("id"), "flavor"),
    }
    if flavor.get("description"):
        out["description"] = str(flavor["description"])
    policy = specs.get("hw:cpu_policy", "shared").lower()
    realtime = specs.get("hw:cpu_realtime", "").lower() in TRUE
    if policy == "mixed":
        notes.append(
            Note(
                at("hw:cpu_policy"),
                "cpu_policy 'mixed': every vCPU is pinned (nfvplace pins whole cpu-sets)",
            )
        )
    dedicated = policy in ("dedicated", "mixed") or realtime
    if dedicated:
        out.update(_cpu_sets(specs, vcpus, ram, at, origins, notes))
    else:
        out.update({"vcpus": vcpus, "memory_mib": ram, "cpu_oversubscription": True})
        for name in ("hw:numa_nodes", "hw:mem_page_size"):
            if name in specs and page_size_kib(specs.get("hw:mem_page_size")) is not None:
                notes.append(
                    Note(
                        at(name),
                        f"{name} on a shared-CPU flavor is not kept: nfvplace places "
                        "NUMA-aware VMs with dedicated vCPUs",
                    )
                )
    required = ["cpu_pinning"] if dedicated else []
    if dedicated and any(cs.get("hugepages") for cs in out.get("cpu_sets", [])):
        required += ["numa_memory_pinning", "hugepage_numa_pinning"]
    if required:
        out["hypervisor"] = {"type": "kvm", "required_capabilities": required}
    emulator = specs.get("hw:emulator_threads_policy", "share").lower()
    if emulator == "isolate":
        out["emulator_threads"] = "isolate"
        origins[("emulator_threads",)] = at("hw:emulator_threads_policy")
    disks: list[dict[str, Any]] = []
    for field, disk in (
        ("disk", "root"),
        ("OS-FLV-EXT-DATA:ephemeral", "ephemeral"),
        ("ephemeral", "ephemeral"),
    ):
        size = flavor.get(field)
        if size not in (None, 0, "0") and not any(d["name"] == disk for d in disks):
            disks.append({"name": disk, "size_gib": parse_int(size, field, (*base, field))})
            origins[("storage", len(disks) - 1)] = (*base, field)
    if disks:
        out["storage"] = disks
    alias = specs.get("pci_passthrough:alias")
    if alias:
        out["pci_devices"] = _pci(alias, at("pci_passthrough:alias"), notes)
        origins[("pci_devices",)] = at("pci_passthrough:alias")
    for name in specs:
        if name in HANDLED or name.startswith(("hw:numa_cpus.", "hw:numa_mem.")):
            continue
        if name.startswith(IGNORED_NAMESPACES):
            continue
        notes.append(Note(at(name), f"extra spec '{name}' has no nfvplace equivalent; ignored"))
    return Conversion(NAME, out, origins, tuple(notes))


def _cpu_sets(
    specs: Mapping[str, str],
    vcpus: int,
    ram: int,
    at: Any,
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> dict[str, Any]:
    nodes = parse_count(specs.get("hw:numa_nodes", "1"), "hw:numa_nodes", at("hw:numa_nodes"))
    if nodes <= 0 or nodes > vcpus:
        raise DialectError(
            f"hw:numa_nodes must be between 1 and vcpus ({vcpus}), got {nodes}", at("hw:numa_nodes")
        )
    page_kib = page_size_kib(specs.get("hw:mem_page_size"))
    if specs.get("hw:mem_page_size", "").lower() in ("large", "any"):
        notes.append(
            Note(
                at("hw:mem_page_size"),
                f"mem_page_size '{specs['hw:mem_page_size']}' read as "
                + ("1GiB pages" if page_kib else "small pages"),
            )
        )
    thread = specs.get("hw:cpu_thread_policy", "").lower()
    cpu_sets = []
    for node in range(nodes):
        cpus_key, mem_key = f"hw:numa_cpus.{node}", f"hw:numa_mem.{node}"
        if cpus_key in specs:
            ids = parse_cpu_list(specs[cpus_key], cpus_key, at(cpus_key))
            origins[("cpu_sets", node, "vcpus")] = at(cpus_key)
        else:
            share = vcpus // nodes
            ids = list(range(node * share, (node + 1) * share if node < nodes - 1 else vcpus))
            origins[("cpu_sets", node, "vcpus")] = at("hw:numa_nodes")
        if mem_key in specs:
            memory = parse_int(specs[mem_key], mem_key, at(mem_key))
            origins[("cpu_sets", node, "memory_mib")] = at(mem_key)
        else:
            memory = ram // nodes
            origins[("cpu_sets", node, "memory_mib")] = at("hw:numa_nodes")
        cpu_set: dict[str, Any] = {"id": node, "vcpus": ids, "memory_mib": memory}
        if thread == "require":
            cpu_set["howtogroup"] = [ids[i : i + 2] for i in range(0, len(ids) - 1, 2)]
            origins[("cpu_sets", node, "howtogroup")] = at("hw:cpu_thread_policy")
        if page_kib:
            cpu_set["hugepages"] = {"size": f"{page_kib}KiB", "count": memory * 1024 // page_kib}
            origins[("cpu_sets", node, "hugepages")] = at("hw:mem_page_size")
        cpu_sets.append(cpu_set)
    out: dict[str, Any] = {"cpu_sets": cpu_sets}
    origins[("cpu_sets",)] = (
        at("hw:numa_nodes") if "hw:numa_nodes" in specs else at("hw:cpu_policy")
    )
    if thread in ("isolate", "prefer", "require"):
        out["cpu_thread_policy"] = thread
        origins[("cpu_thread_policy",)] = at("hw:cpu_thread_policy")
    if specs.get("hw:cpu_realtime", "").lower() in TRUE:
        mask = specs.get("hw:cpu_realtime_mask", "")
        non_rt = (
            set(
                parse_cpu_list(
                    mask.replace("^", ""), "hw:cpu_realtime_mask", at("hw:cpu_realtime_mask")
                )
            )
            if mask
            else set()
        )
        out["realtime_vcpus"] = [v for v in range(vcpus) if v not in non_rt]
        origins[("realtime_vcpus",)] = at("hw:cpu_realtime_mask" if mask else "hw:cpu_realtime")
    total = sum(len(cs["vcpus"]) for cs in cpu_sets)
    if total != vcpus:
        out["vcpus"] = vcpus  # lint reports the mismatch (NFV105) at the flavor's vcpus
    memory_total = sum(cs["memory_mib"] for cs in cpu_sets)
    if memory_total != ram:
        out["memory_mib"] = ram
    return out


def _pci(alias: str, path: PathKey, notes: list[Note]) -> list[dict[str, Any]]:
    devices = []
    for item in alias.split(","):
        name, _, count = item.strip().partition(":")
        device_class = "crypto" if re.search(r"qat|crypto|cpm", name, re.I) else "other"
        if device_class == "other":
            notes.append(Note(path, f"PCI alias '{name}' read as a device of class 'other'"))
        devices.append(
            {
                "class": device_class,
                "count": parse_int(count or "1", "alias count", path),
                "model": name,
            }
        )
    return devices
