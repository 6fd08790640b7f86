"""The OSM EPA parts beside the guest's CPUs and memory: host-epa, hypervisor-epa, vswitch-epa,
quotas and PCIe devices. Each is carried into the VM Descriptor where nfvplace can say it, or
reported with the reason it is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import ASSUMED, Note, as_list, as_mapping, one_of, parse_count

GUEST_EPA_READ = {
    "cpu-pinning-policy",
    "cpu-thread-pinning-policy",
    "mempage-size",
    "numa-node-policy",
    "trusted-execution",
    "storage-gb",
}
QUOTAS = ("cpu-quota", "mem-quota", "disk-io-quota", "vif-quota")
OPENVIM_FEATURES = {
    "64b": "lm",
    "lps": "pdpe1gb",
    "ht": "ht",
}
"""OpenVIM's short feature names (OSM `om-cpu-feature`) that are /proc/cpuinfo flags."""
OPENVIM_NOT_FLAGS = {
    "iommu": "an IOMMU is a platform feature; nfvplace asks for it through the io_virtualization "
    "capability set of the VM's passthrough and SR-IOV interfaces",
    "dioc": "direct I/O cache (DCA) is not modelled by nfvplace",
    "tlbps": "TLB page-size support is implied by the hugepages nfvplace checks",
    "hwsv": "hardware virtualization support: every host nfvplace places on runs KVM or ESXi",
}
HYPERVISORS = {"require_kvm": "kvm", "prefer_kvm": "kvm"}
_PREFERENCE = (
    "{} is a preference: nfvplace does not rank hosts by it, and carrying it as a requirement "
    "would refuse the hosts without it; not carried"
)
OVS_ACCELERATION = ("mandatory", "preferred", "disabled")


def read(
    vdu: Mapping[str, Any],
    vdu_path: PathKey,
    epa: Mapping[str, Any],
    where: Mapping[str, PathKey],
    out: dict[str, Any],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    """Everything of host-epa, hypervisor-epa, vswitch-epa, quotas and PCIe devices."""
    _host(as_mapping(vdu.get("host-epa")), (*vdu_path, "host-epa"), out, origins, notes)
    _hypervisor(as_mapping(vdu.get("hypervisor-epa")), (*vdu_path, "hypervisor-epa"), out, notes)
    _vswitch(as_mapping(vdu.get("vswitch-epa")), (*vdu_path, "vswitch-epa"), out, notes)
    for key in QUOTAS:
        if key in epa:
            notes.append(
                Note(
                    where[key],
                    f"{key} is not carried: a runtime limit (shares, limits, reservations) the "
                    "VIM applies after placement",
                )
            )
    devices = []
    for index, raw in enumerate(as_list(epa.get("pcie-device"))):
        device = as_mapping(raw)
        path = (*where["pcie-device"], index)
        devices.append(
            {
                "class": "other",
                "count": max(1, parse_count(device.get("count", 1), "count", (*path, "count"))),
                "model": str(device.get("device-id", "")) or None,
            }
        )
        origins[("pci_devices", index)] = path
        notes.append(Note(path, "PCIe device read as a device of class 'other'", ASSUMED))
    if devices:
        out["pci_devices"] = [{k: v for k, v in d.items() if v is not None} for d in devices]
    for key in epa:
        if key not in GUEST_EPA_READ and key not in QUOTAS and key != "pcie-device":
            notes.append(Note(where[key], f"guest-epa '{key}' has no nfvplace equivalent"))


def _host(
    host: Mapping[str, Any],
    path: PathKey,
    out: dict[str, Any],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    if not host:
        return
    processor: dict[str, Any] = {}
    flags: list[str] = []
    for key, value in host.items():
        at = (*path, key)
        if key == "om-cpu-model-string":
            processor["model"] = str(value)
            notes.append(
                Note(
                    at, "the CPU model string is carried as the reference processor model", ASSUMED
                )
            )
        elif key in ("cpu-arch", "cpu-vendor") and _preference(value):
            notes.append(Note(at, _PREFERENCE.format(f"{key} {value}")))
        elif key == "cpu-arch":
            processor["architecture"] = str(value).lower().removeprefix("require_")
        elif key == "cpu-vendor":
            processor["vendor"] = str(value).removeprefix("REQUIRE_")
        elif key in ("om-cpu-feature", "cpu-feature"):
            flags.extend(_features(as_list(value), at, notes))
        else:
            notes.append(Note(at, f"host-epa '{key}' has no nfvplace equivalent"))
    if flags:
        processor["required_flags"] = sorted(set(flags))
    if processor:
        out["processor"] = processor
        origins[("processor",)] = path


def _preference(value: Any) -> bool:
    """OSM's `PREFER_...` values (`PREFER_AES`, `PREFER_X86_64`, `PREFER_INTEL`)."""
    return str(value).strip().upper().startswith("PREFER_")


def _features(items: list[Any], path: PathKey, notes: list[Note]) -> list[str]:
    flags = []
    for index, raw in enumerate(items):
        name = str(as_mapping(raw).get("feature", raw)).strip()
        key = name.lower().removeprefix("require_")
        if _preference(name):
            notes.append(Note((*path, index), _PREFERENCE.format(f"feature '{name}'")))
        elif key in OPENVIM_FEATURES:
            flags.append(OPENVIM_FEATURES[key])
        elif key in OPENVIM_NOT_FLAGS:
            notes.append(Note((*path, index), f"feature '{name}': {OPENVIM_NOT_FLAGS[key]}"))
        else:
            flags.append(key)
            notes.append(
                Note((*path, index), f"feature '{name}' read as CPU flag '{key}'", ASSUMED)
            )
    return flags


def _hypervisor(
    hypervisor: Mapping[str, Any], path: PathKey, out: dict[str, Any], notes: list[Note]
) -> None:
    if not hypervisor:
        return
    for key, value in hypervisor.items():
        at = (*path, key)
        if key == "type":
            word = one_of(value, (*HYPERVISORS, "any"), "hypervisor-epa type", at)
            if word == "require_kvm":
                out.setdefault("hypervisor", {})["type"] = "kvm"
            elif word == "prefer_kvm":
                notes.append(Note(at, "PREFER_KVM is a preference; nfvplace does not rank by it"))
        else:
            notes.append(Note(at, f"hypervisor-epa '{key}' ({value}) has no nfvplace equivalent"))


def _vswitch(
    vswitch: Mapping[str, Any], path: PathKey, out: dict[str, Any], notes: list[Note]
) -> None:
    for key, value in vswitch.items():
        at = (*path, key)
        if key in ("ovs-acceleration", "ovs-offload"):
            word = one_of(value, OVS_ACCELERATION, key, at)
            if word == "mandatory":
                hypervisor = out.setdefault("hypervisor", {})
                hypervisor["vswitch"] = {"accelerated": True}
            elif word == "preferred":
                notes.append(
                    Note(at, f"{key} PREFERRED is a preference; nfvplace does not rank by it")
                )
        else:
            notes.append(Note(at, f"vswitch-epa '{key}' has no nfvplace equivalent"))
