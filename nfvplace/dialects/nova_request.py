"""The parts of a Nova request beside the flavor's sizes: image properties and PCI devices.

A Nova scheduling request (what `nfvplace.integrations.nova` sends, and what a user may write) is
`{"flavor": {...}, "image": {"properties": {...}}, "pci_requests": [...]}`:

- `image.properties` (`hw_cpu_policy`, `hw_mem_page_size`, `hw_numa_nodes`, ...) are merged into
  the flavor's extra specs by Nova's own rules (`nova.virt.hardware`): the flavor wins where Nova
  lets it, the image fills what the flavor leaves open, and a conflict Nova refuses is an error
  naming both keys.
- `pci_requests` are Nova's resolved PCI requests (`InstancePCIRequest`: `alias_name`, `count`,
  `numa_policy`, `spec: [{vendor_id, product_id, dev_type, physical_network}]`): an alias request
  is a PCI device of that vendor and product id; a request without alias (a Neutron SR-IOV port)
  is an `sriov` interface (`dedicated` for `type-PF`) on its physical network. Without them, the
  flavor's `pci_passthrough:alias` names the devices by alias name.

Every PCI device and port of a VM with a guest NUMA topology keeps Nova's NUMA affinity policy
(`hw:pci_numa_affinity_policy`, the image's `hw_pci_numa_affinity_policy`, or a PCI request's
`numa_policy`, which for a port is its Neutron `numa_affinity_policy`; Nova's default is `legacy`)
as its `numa_affinity`, relative to every guest node.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import ASSUMED, DialectError, Note, as_list, as_mapping, parse_int

PCI_POLICIES = ("required", "legacy", "preferred", "socket")
LARGE_WORDS = ("any", "large")
# image property -> extra spec, for the properties Nova merges with the flavor's extra specs
IMAGE_SPECS = {
    "hw_cpu_policy": "hw:cpu_policy",
    "hw_cpu_thread_policy": "hw:cpu_thread_policy",
    "hw_mem_page_size": "hw:mem_page_size",
    "hw_numa_nodes": "hw:numa_nodes",
    "hw_pci_numa_affinity_policy": "hw:pci_numa_affinity_policy",
    "hw_cpu_realtime_mask": "hw:cpu_realtime_mask",
}
NUMA_LISTS = ("hw_numa_cpus.", "hw_numa_mem.")


def _refuse(image_key: str, spec: str, flavor_value: str, image_value: str, path: PathKey) -> None:
    raise DialectError(
        f"image property {image_key}={image_value!r} conflicts with the flavor's "
        f"{spec}={flavor_value!r}; Nova refuses the request",
        path,
    )


def merge_image(
    specs: dict[str, str], image: Mapping[str, Any], path: PathKey, notes: list[Note]
) -> dict[str, PathKey]:
    """Merge image properties into `specs` (in place) by Nova's rules; the paths of the merged keys."""
    props = as_mapping(image.get("properties"))
    at: PathKey = (*path, "properties")
    merged: dict[str, PathKey] = {}
    flavor_lists = any(k.startswith(("hw:numa_cpus.", "hw:numa_mem.")) for k in specs)
    for key, raw in props.items():
        value = str(raw).lower() if isinstance(raw, bool) else str(raw)
        where = (*at, key)
        spec = IMAGE_SPECS.get(key)
        if key.startswith(NUMA_LISTS):
            spec = "hw:" + key.removeprefix("hw_")
            if flavor_lists:
                _refuse(key, "hw:numa_cpus/hw:numa_mem", "set", value, where)
        if spec is None:
            if key.startswith("hw_"):
                notes.append(Note(where, f"image property '{key}={value}' not carried"))
            continue
        current = specs.get(spec)
        if _image_wins(spec, current, value, key, where):
            specs[spec] = value
            merged[spec] = where
    return merged


def _image_wins(spec: str, flavor: str | None, image: str, key: str, where: PathKey) -> bool:
    """Whether the image's value is used (Nova's `_get_flavor_image_meta` callers); raises for
    the conflicts Nova refuses."""
    if flavor is None:
        if spec == "hw:mem_page_size":  # Nova: an image may only narrow the flavor's page size
            _refuse(key, spec, "<empty>", image, where)
        return True
    if spec == "hw:cpu_policy":
        if flavor in ("shared", "mixed") and image in ("dedicated", "mixed") and image != flavor:
            _refuse(key, spec, flavor, image, where)
        return False
    if spec == "hw:cpu_thread_policy":
        if flavor != "prefer" and image != flavor:
            _refuse(key, spec, flavor, image, where)
        return False
    if spec == "hw:mem_page_size":
        if flavor.lower() in LARGE_WORDS:
            return True
        _refuse(key, spec, flavor, image, where)
    if spec == "hw:cpu_realtime_mask":
        return True  # Nova: the image's mask is the more specific one
    if spec == "hw:numa_nodes" or flavor != image:  # Nova refuses hw_numa_nodes on both sides
        _refuse(key, spec, flavor, image, where)
    return False


def pci_affinity(policy: str, path: PathKey) -> str:
    """A device's `numa_affinity` for Nova's `numa_policy` (absent: Nova's default, `legacy`)."""
    if policy not in ("", *PCI_POLICIES):
        raise DialectError(
            f"hw:pci_numa_affinity_policy must be one of {', '.join(PCI_POLICIES)}, got {policy!r}",
            path,
        )
    return policy or "legacy"


def alias_devices(alias: str, path: PathKey, notes: list[Note]) -> list[dict[str, Any]]:
    """`pci_passthrough:alias` (`name:count,...`) without the cloud's alias definitions: devices
    named by alias (class `crypto` for QAT-like names, else `other`)."""
    devices = []
    for item in alias.split(","):
        name, _, count = item.strip().partition(":")
        device_class = "crypto" if re.search(r"qat|crypto|cpm", name, re.I) else "other"
        if device_class == "other":
            notes.append(
                Note(path, f"PCI alias '{name}' read as a device of class 'other'", ASSUMED)
            )
        devices.append(
            {
                "class": device_class,
                "count": parse_int(count or "1", "alias count", path),
                "model": name,
            }
        )
    return devices


def resolved_requests(
    requests: Any, path: PathKey, notes: list[Note]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Nova's resolved PCI requests as (devices, SR-IOV interfaces, their NUMA policies)."""
    devices: list[dict[str, Any]] = []
    ports: list[dict[str, Any]] = []
    policies: list[str] = []
    for index, raw in enumerate(as_list(requests)):
        where = (*path, index)
        request = as_mapping(raw)
        specs = [as_mapping(s) for s in as_list(request.get("spec"))]
        if not specs:
            raise DialectError("a PCI request needs a 'spec' list", where)
        if len(specs) > 1:
            notes.append(
                Note((*where, "spec"), "several specs (any of them): only the first is read")
            )
        spec = specs[0]
        count = parse_int(request.get("count", 1), "count", (*where, "count"))
        policies.append(str(request.get("numa_policy") or ""))
        if request.get("alias_name") is None:
            mode = "dedicated" if spec.get("dev_type") == "type-PF" else "sriov"
            port: dict[str, Any] = {"name": f"port{index}", "mode": mode}
            if policies[-1]:
                port["numa_affinity"] = pci_affinity(policies[-1], (*where, "numa_policy"))
            if spec.get("physical_network"):
                port["physical_network"] = str(spec["physical_network"])
            ports.extend(dict(port, name=f"port{index}-{k}") if k else port for k in range(count))
            continue
        device = {"class": "other", "count": count}
        if policies[
            -1
        ]:  # this request's own policy (a port's numa_affinity_policy, or the flavor's)
            device["numa_affinity"] = pci_affinity(policies[-1], (*where, "numa_policy"))
        device |= {"vendor": str(spec["vendor_id"])} if spec.get("vendor_id") else {}
        device |= {"model": str(spec["product_id"])} if spec.get("product_id") else {}
        devices.append(device)
    return devices, ports, policies
