"""A Nova `RequestSpec` as the Nova request document the service reads with the Nova reader.

`{"flavor": {name, vcpus, ram, disk, extra_specs}, "image": {"properties": {...}},
"pci_requests": [{alias_name, count, numa_policy, spec}, ...]}`: the flavor and its extra specs,
the image properties that are set (the guest NUMA lists as Nova's `hw_numa_cpus.N` /
`hw_numa_mem.N` strings), and the PCI requests Nova resolved (flavor aliases and SR-IOV ports).
The service merges and reads them (`nfvplace/dialects/nova_request.py`): one reading, the same as
`nfvplace convert` and every other door. Standard library only; duck-typed on Nova's objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _image_properties(spec_obj: Any) -> dict[str, Any]:
    image = getattr(spec_obj, "image", None)
    props = getattr(image, "properties", None)
    if props is None:
        return {}
    raw = props.to_dict() if hasattr(props, "to_dict") else dict(props)
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "hw_numa_cpus":
            for n, cpus in enumerate(value):
                out[f"hw_numa_cpus.{n}"] = ",".join(str(c) for c in sorted(cpus))
        elif key == "hw_numa_mem":
            for n, memory in enumerate(value):
                out[f"hw_numa_mem.{n}"] = str(memory)
        elif isinstance(value, str | int | float | bool):
            out[key] = value
    return out


def _pci_requests(spec_obj: Any) -> list[dict[str, Any]]:
    requests = getattr(getattr(spec_obj, "pci_requests", None), "requests", None) or []
    out = []
    for request in requests:
        specs = [
            {str(k): v for k, v in spec.items() if isinstance(v, str | int) and k != "rp_uuids"}
            for spec in (getattr(request, "spec", None) or [])
            if isinstance(spec, Mapping)
        ]
        out.append(
            {
                "alias_name": getattr(request, "alias_name", None),
                "count": int(getattr(request, "count", 1)),
                "numa_policy": getattr(request, "numa_policy", None),
                "spec": specs,
            }
        )
    return out


def request_document(spec_obj: Any) -> dict[str, Any]:
    """The Nova request document of a `nova.objects.RequestSpec`."""
    flavor = spec_obj.flavor
    document: dict[str, Any] = {
        "flavor": {
            "name": str(flavor.name),
            "vcpus": int(flavor.vcpus),
            "ram": int(flavor.memory_mb),
            "disk": int(getattr(flavor, "root_gb", 0) or 0),
            "extra_specs": {str(k): str(v) for k, v in (flavor.extra_specs or {}).items()},
        }
    }
    properties = _image_properties(spec_obj)
    if properties:
        document["image"] = {"properties": properties}
    requests = _pci_requests(spec_obj)
    if requests:
        document["pci_requests"] = requests
    return document


def pins_isolated(document: Mapping[str, Any]) -> bool:
    """Whether a Nova request document pins vCPUs with `isolate` (flavor extra specs first,
    then image properties, as Nova reads them)."""
    specs = document.get("flavor", {}).get("extra_specs") or {}
    properties = (document.get("image") or {}).get("properties") or {}
    policy = specs.get("hw:cpu_policy") or properties.get("hw_cpu_policy")
    if specs.get("hw:cpu_dedicated_mask"):
        policy = "mixed"
    thread = specs.get("hw:cpu_thread_policy") or properties.get("hw_cpu_thread_policy")
    return policy in ("dedicated", "mixed") and thread == "isolate"
