"""Claiming and releasing a VM Configuration's resources on a host descriptor: the only write path.

Pure functions: they return a new Compute Host Descriptor and never change their inputs. One function
computes what a claim would conflict with (`conflicts`), one applies it (`claim`, or `claim_what_fits`
which applies what fits and reports the rest), one undoes it (`release`, its exact inverse). The
engine claims with them while placing (so the library, the CLI and the service get a configuration and
the host with it claimed from the same call); the store applies nothing a second time: it writes the
engine's claimed host, undoes a released placement with `release`, and derives a host's availability
from what its agent reports with `release` (placements the agent already shows) then `claim_what_fits`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from .errors import CLAIM_CONFLICT, Issue, NfvplaceError
from .models.chd import ComputeHostDescriptor
from .models.configuration import VmConfiguration


@dataclass(eq=False)
class ClaimConflictError(NfvplaceError):
    """A configuration asks for host resources that are not free (or not there)."""


class _Cpus:
    """PU id -> its entry as a dict. Entries stay models (and are not validated again when the host
    is rebuilt) until first looked up; only the PUs a configuration names are dumped."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._where: dict[int, tuple[list[Any], int]] = {}
        for node in data["numa_nodes"]:
            entries: list[Any] = node.get("cpus", [])
            for k, cpu in enumerate(entries):
                pu = cpu["id"] if isinstance(cpu, dict) else cpu.id
                self._where[pu] = (entries, k)

    def get(self, pu: int) -> dict[str, Any] | None:
        found = self._where.get(pu)
        if found is None:
            return None
        entries, k = found
        cpu = entries[k]
        if not isinstance(cpu, dict):
            cpu = cpu.model_dump(mode="python")
            entries[k] = cpu
        return cpu  # type: ignore[no-any-return]


def _fields(model: BaseModel) -> dict[str, Any]:
    """A model's fields as a dict whose values are left as they are (sub-models stay models)."""
    return {name: getattr(model, name) for name in type(model).model_fields}


def _touch(entries: list[Any], k: int, lazy: str | None = None) -> dict[str, Any]:
    """Entry k of `entries` as a mutable dict (dumped on first touch). With `lazy`, only that field's
    items stay models (a list), to be touched one by one; otherwise the entry is dumped in full."""
    entry = entries[k]
    if isinstance(entry, dict):
        return entry
    if lazy is None:
        dumped: dict[str, Any] = entry.model_dump(mode="python", by_alias=True)
    else:
        dumped = _fields(entry)
        dumped[lazy] = list(dumped[lazy])
    entries[k] = dumped
    return dumped


def _shallow(host: ComputeHostDescriptor) -> dict[str, Any]:
    """The host as a dict of its fields, every node as a dict of its fields with the node's lists
    (PUs, NICs, PCI devices) as lists of models. Only what a claim touches is dumped (see `_touch`)
    and validated again; everything else is shared with `host` (models are immutable)."""
    data = _fields(host)
    nodes: list[dict[str, Any]] = []
    for node in host.numa_nodes:
        shallow = _fields(node)
        shallow["cpus"] = list(node.cpus)
        shallow["nics"] = list(node.nics)
        shallow["pci_devices"] = list(node.pci_devices)
        nodes.append(shallow)
    data["numa_nodes"] = nodes
    return data


class _Nics:
    """Port and VF PCI address -> where it is; entries are dumped only when looked up."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._ports: dict[str, tuple[dict[str, Any], int, int]] = {}
        self._vfs: dict[str, tuple[dict[str, Any], int, int, int]] = {}
        for node in data["numa_nodes"]:
            for k, nic in enumerate(node["nics"]):
                for j, port in enumerate(nic.ports):
                    self._ports[port.pci_address.lower()] = (node, k, j)
                    for v, vf in enumerate(port.vfs):
                        self._vfs[vf.pci_address.lower()] = (node, k, j, v)

    @staticmethod
    def _port(node: dict[str, Any], k: int, j: int) -> dict[str, Any]:
        nic = _touch(node["nics"], k, lazy="ports")
        return _touch(nic["ports"], j, lazy="vfs")

    def port(self, address: str) -> dict[str, Any] | None:
        found = self._ports.get(address)
        return None if found is None else self._port(*found)

    def vf(self, address: str) -> dict[str, Any] | None:
        found = self._vfs.get(address)
        if found is None:
            return None
        node, k, j, v = found
        return _touch(self._port(node, k, j)["vfs"], v)


def _apply(
    host: ComputeHostDescriptor, config: VmConfiguration, sign: int
) -> tuple[ComputeHostDescriptor, list[Issue]]:
    """Claim (sign=+1) or release (sign=-1) `config` on `host`; returns the host and any conflicts."""
    data = _shallow(host)
    issues: list[Issue] = []
    owner = config.owner
    claiming = sign > 0
    if config.host != host.id:
        issues.append(Issue(f"configuration is for host {config.host}, not {host.id}", path="host"))
        return host, issues
    cpus = _Cpus(data)
    nics = _Nics(data) if any(i.mode != "vswitch" for i in config.interfaces) else None
    nodes = {node["id"]: node for node in data["numa_nodes"]}

    for pu in config.held_cpus:
        cpu = cpus.get(pu)
        if cpu is None:
            issues.append(Issue(f"PU {pu} does not exist on {host.id}", path="cpu_sets"))
            continue
        if claiming:
            if not cpu.get("eligible", True) or cpu.get("state", "free") != "free":
                issues.append(
                    Issue(
                        f"PU {pu} is not free ({cpu.get('state')}, owner {cpu.get('owner')})",
                        path="cpu_sets",
                    )
                )
                continue
            cpu.update(state="dedicated", owner=owner)
        elif cpu.get("owner") == owner:
            cpu.update(state="free", owner=None)

    if config.shared is not None and config.shared.cpus:
        share = config.shared.vcpus / len(config.shared.cpus)
        for pu in config.shared.cpus:
            cpu = cpus.get(pu)
            if cpu is None:
                issues.append(Issue(f"PU {pu} does not exist on {host.id}", path="shared.cpus"))
                continue
            state = str(cpu.get("state", "free"))
            if claiming and (not cpu.get("eligible", True) or state == "dedicated"):
                issues.append(Issue(f"PU {pu} cannot be shared ({state})", path="shared.cpus"))
                continue
            ratio = cpu.get("oversubscription_ratio") or 1.0
            usage = (cpu.get("usage_ratio") or 0.0) + sign * share / ratio
            if claiming and usage > 1.0 + 1e-9:
                issues.append(
                    Issue(
                        f"PU {pu} would be used {usage:.2f} of its ratio {ratio}",
                        path="shared.cpus",
                    )
                )
            usage = max(usage, 0.0)
            cpu.update(
                state="shared" if usage > 1e-9 or state == "shared" else "free",
                oversubscription_ratio=ratio,
                usage_ratio=round(usage, 9),
            )

    def node_memory(node_id: int, path: str) -> dict[str, Any] | None:
        node = nodes.get(node_id)
        if node is None:
            issues.append(Issue(f"NUMA node {node_id} does not exist on {host.id}", path=path))
            return None
        memory = node["memory"]
        if not isinstance(memory, dict):
            memory = node["memory"] = memory.model_dump(mode="python", by_alias=True)
        return memory  # type: ignore[no-any-return]

    for index, cs in enumerate(config.cpu_sets):
        memory = node_memory(cs.numa_node, f"cpu_sets[{index}].numa_node")
        if memory is None:
            continue
        if cs.hugepages is not None and cs.hugepages.count:
            pool = next(
                (p for p in memory.get("hugepages", []) if p["size_kib"] == cs.hugepages.size_kib),
                None,
            )
            if pool is None:
                issues.append(
                    Issue(
                        f"node {cs.numa_node} has no {cs.hugepages.size_kib} KiB pool",
                        path=f"cpu_sets[{index}].hugepages",
                    )
                )
            else:
                used = pool.get("used", 0) + sign * cs.hugepages.count
                if claiming and used > pool["total"]:
                    issues.append(
                        Issue(
                            f"node {cs.numa_node}: {pool['total'] - pool.get('used', 0)} free "
                            f"{cs.hugepages.size_kib} KiB pages, {cs.hugepages.count} claimed",
                            path=f"cpu_sets[{index}].hugepages",
                        )
                    )
                pool["used"] = max(used, 0)
        _charge_normal(memory, sign * cs.normal_memory_mib)
        if cs.memory_bandwidth_gbps:
            memory["bandwidth_used_gbps"] = max(
                memory.get("bandwidth_used_gbps", 0.0) + sign * cs.memory_bandwidth_gbps, 0.0
            )

    if config.shared is not None and config.shared.memory_mib:
        node_id = config.shared.numa_node
        if node_id is None:
            node_id = min(nodes)
        memory = node_memory(node_id, "shared.numa_node")
        if memory is not None:
            _charge_normal(memory, sign * config.shared.memory_mib)

    for index, iface in enumerate(config.interfaces):
        path = f"interfaces[{index}]"
        if iface.mode == "vswitch":
            vswitch = _vswitch(data)
            if vswitch is None:
                if claiming:
                    issues.append(Issue(f"host {host.id} has no vSwitch", path=path))
                continue
            vswitch["bandwidth_used_gbps"] = max(
                vswitch.get("bandwidth_used_gbps", 0.0) + sign * iface.bandwidth_gbps, 0.0
            )
            vswitch["interfaces_in_use"] = max(vswitch.get("interfaces_in_use", 0) + sign, 0)
            continue
        address = (iface.pci_address or "").lower()
        if iface.mode == "dedicated":
            assert nics is not None
            found = nics.port(address)
            if found is None:
                issues.append(
                    Issue(f"port {iface.pci_address} does not exist on {host.id}", path=path)
                )
                continue
            port = found
            if claiming:
                if not port.get("eligible", True) or str(port.get("usage", "free")) != "free":
                    issues.append(
                        Issue(
                            f"port {iface.pci_address} is not free ({port.get('usage')})", path=path
                        )
                    )
                    continue
                port.update(usage="dedicated", owner=owner, bandwidth_used_gbps=port["speed_gbps"])
            elif port.get("owner") == owner:
                port.update(usage="free", owner=None, bandwidth_used_gbps=0.0)
        else:  # sriov
            assert nics is not None
            vf = nics.vf(address)
            if vf is None:
                issues.append(
                    Issue(f"VF {iface.pci_address} does not exist on {host.id}", path=path)
                )
                continue
            if claiming:
                if vf.get("in_use"):
                    issues.append(
                        Issue(f"VF {iface.pci_address} is in use by {vf.get('owner')}", path=path)
                    )
                    continue
                vf.update(in_use=True, owner=owner)
            elif vf.get("owner") == owner:
                vf.update(in_use=False, owner=None)
            else:
                continue
            pf = nics.port((iface.physical_function or "").lower())
            if pf is not None:
                port = pf
                port["bandwidth_used_gbps"] = max(
                    port.get("bandwidth_used_gbps", 0.0) + sign * iface.bandwidth_gbps, 0.0
                )
                # A port that hands out a VF is shared through SR-IOV from then on; releasing the VF
                # leaves it so (its VFs stay configured: passing the whole port through would need
                # them torn down first, which is the operator's call, not a release's).
                if claiming and str(port.get("usage", "free")) == "free":
                    port["usage"] = "sriov"

    for index, device in enumerate(config.pci_devices):
        node = nodes.get(device.numa_node)
        devices: list[Any] = (node or {}).get("pci_devices", [])
        at = next(
            (
                k
                for k, d in enumerate(devices)
                if (d["pci_address"] if isinstance(d, dict) else d.pci_address).lower()
                == device.pci_address.lower()
            ),
            None,
        )
        entry = None if at is None else _touch(devices, at)
        if entry is None:
            issues.append(
                Issue(
                    f"PCI device {device.pci_address} does not exist on {host.id}",
                    path=f"pci_devices[{index}]",
                )
            )
            continue
        if claiming:
            if entry.get("in_use") or not entry.get("eligible", True):
                issues.append(
                    Issue(
                        f"PCI device {device.pci_address} is not free", path=f"pci_devices[{index}]"
                    )
                )
                continue
            entry.update(in_use=True, owner=owner)
        elif entry.get("owner") == owner:
            entry.update(in_use=False, owner=None)

    if config.cpu_set_links:
        data["interconnect"] = [
            e.model_dump(mode="python", by_alias=True) for e in data.get("interconnect", ())
        ]
    for link in config.cpu_set_links:
        a, b = sorted(link.numa_nodes)
        for entry in data.get("interconnect", []):
            if sorted(entry["nodes"]) == [a, b]:
                entry["bandwidth_used_gbps"] = max(
                    entry.get("bandwidth_used_gbps", 0.0) + sign * link.bandwidth_mbps / 1000, 0.0
                )

    instances: list[Any] = [i for i in host.instances if i.id != owner]
    if claiming:
        instances.append(
            {"id": owner, "vm": config.vm, "memory_bandwidth_gbps": config.memory_bandwidth_gbps}
        )
    data["instances"] = instances
    return ComputeHostDescriptor.model_validate(data), issues


def _vswitch(data: dict[str, Any]) -> dict[str, Any] | None:
    """The host's vSwitch as a mutable dict (None: no hypervisor or no vSwitch)."""
    hypervisor = data.get("hypervisor")
    if hypervisor is None:
        return None
    if not isinstance(hypervisor, dict):
        hypervisor = data["hypervisor"] = _fields(hypervisor)
    vswitch = hypervisor.get("vswitch")
    if vswitch is not None and not isinstance(vswitch, dict):
        vswitch = hypervisor["vswitch"] = vswitch.model_dump(mode="python", by_alias=True)
    return vswitch


def _charge_normal(memory: dict[str, Any], delta_mib: int) -> None:
    normal = memory.setdefault("normal", {})
    normal["used_mib"] = max(normal.get("used_mib", 0) + delta_mib, 0)


def claim_what_fits(
    host: ComputeHostDescriptor, config: VmConfiguration
) -> tuple[ComputeHostDescriptor, tuple[Issue, ...]]:
    """`host` with every resource of `config` that still fits claimed, and why the rest does not.

    Used when a host agent reports a fresh CHD: existing claims are kept, and what the new CHD no
    longer supports (a VF that vanished, a PU that became ineligible) is reported as a conflict.
    """
    updated, issues = _apply(host, config, +1)
    return updated, tuple(issues)


def conflicts(host: ComputeHostDescriptor, config: VmConfiguration) -> tuple[Issue, ...]:
    """Why `config` cannot be claimed on `host` (empty when it can)."""
    return claim_what_fits(host, config)[1]


def claim(host: ComputeHostDescriptor, config: VmConfiguration) -> ComputeHostDescriptor:
    """`host` with every resource of `config` marked as used by it; raises ClaimConflictError if any
    resource is missing or already used."""
    updated, issues = _apply(host, config, +1)
    if issues:
        raise ClaimConflictError(
            CLAIM_CONFLICT,
            f"{config.owner} cannot be claimed on {host.id}",
            issues=tuple(issues),
        )
    return updated


def release(host: ComputeHostDescriptor, config: VmConfiguration) -> ComputeHostDescriptor:
    """`host` with the resources `config` holds freed again. Idempotent: releasing twice, or
    releasing what was never claimed, changes nothing that belongs to someone else."""
    if config.owner not in holders(host):
        return host
    return _apply(host, config, -1)[0]


def holders(host: ComputeHostDescriptor) -> set[str]:
    """Every owner `host` shows: its instances and the owners of its PUs, ports, VFs and devices.

    A host agent that reports a VM as running (by its instance id, or as the owner of anything) has
    counted what it uses (hugepages, memory, bandwidth) in what it reports as used.
    """
    owners = {i.id for i in host.instances}
    for node in host.numa_nodes:
        owners.update(c.owner for c in node.cpus if c.owner)
        owners.update(d.owner for d in node.pci_devices if d.owner)
        for nic in node.nics:
            for port in nic.ports:
                if port.owner:
                    owners.add(port.owner)
                owners.update(vf.owner for vf in port.vfs if vf.owner)
    return owners


__all__ = [
    "CLAIM_CONFLICT",
    "ClaimConflictError",
    "claim",
    "claim_what_fits",
    "conflicts",
    "holders",
    "release",
]
