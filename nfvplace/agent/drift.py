"""The host's truth against the inventory's: what the agent reports, and where they differ.

- `known_as(domains, owners)`: the domains under the owner names the inventory knows.
- `with_domains(chd, domains)`: the discovered CHD with what libvirt's running domains hold marked
  as theirs (PUs dedicated, VFs, ports and PCI devices in use, owner = the domain's name). Hugepage
  use already comes from sysfs. The service re-applies its claims on top and counts a placement
  the host already shows (its owner holds resources) once (`store.availability.derive`).
- `drift(host, inventory, domains)`: the differences between the host (as reported) and the
  inventory as the service held it before this report: PUs, VFs, ports and PCI devices in use on
  the host but free in the inventory (`host_only`), held in the inventory by an owner no running
  domain is (`inventory_only`), or held by another owner (`owner_mismatch`); hugepages used on a
  node beyond the inventory's count, or the reverse. PUs and PCI devices are compared only when the
  domains are known (libvirt readable).

Pure: descriptors in, descriptors and findings out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..models.chd import ComputeHostDescriptor
from .domains import Domain

HOST_ONLY = "host_only"
INVENTORY_ONLY = "inventory_only"
OWNER_MISMATCH = "owner_mismatch"


@dataclass(frozen=True)
class Drift:
    resource: str  # pu, vf, port, device, hugepages
    side: str  # host_only, inventory_only, owner_mismatch
    message: str
    count: int = 1  # pages for hugepages, else 1


def _users(domains: Sequence[Domain]) -> tuple[dict[int, str], dict[str, str]]:
    pus = {pu: d.name for d in domains for pu in d.pus}
    pci = {address: d.name for d in domains for address in d.pci}
    return pus, pci


def known_as(domains: Sequence[Domain], owners: Iterable[str]) -> list[Domain]:
    """The domains under the owner names the inventory knows: nfvplace's libvirt renderer names a
    domain after its instance with '/' written '_' (libvirt names cannot hold '/')."""
    name_of = {owner.replace("/", "_"): owner for owner in owners}
    return [replace(d, name=name_of.get(d.name, d.name)) for d in domains]


def with_domains(chd: ComputeHostDescriptor, domains: Sequence[Domain]) -> ComputeHostDescriptor:
    """`chd` with the PUs and PCI functions libvirt's running domains hold marked as theirs."""
    pus, pci = _users(domains)
    data = chd.model_dump(mode="json", by_alias=True, exclude_none=True)
    for node in data["numa_nodes"]:
        for cpu in node.get("cpus", ()):
            owner = pus.get(cpu["id"])
            if owner is not None and cpu.get("eligible", True):
                cpu.update(state="dedicated", owner=owner)
                cpu.pop("oversubscription_ratio", None)
                cpu.pop("usage_ratio", None)
        for port in (p for nic in node.get("nics", ()) for p in nic.get("ports", ())):
            owner = pci.get(port["pci_address"].lower())
            if owner is not None:
                port.update(usage="dedicated", owner=owner)
            for vf in port.get("vfs", ()):
                owner = pci.get(vf["pci_address"].lower())
                if owner is not None:
                    vf.update(in_use=True, owner=owner)
        for device in node.get("pci_devices", ()):
            owner = pci.get(device["pci_address"].lower())
            if owner is not None:
                device.update(in_use=True, owner=owner)
    return ComputeHostDescriptor.model_validate(data)


def _pu_holders(chd: ComputeHostDescriptor) -> dict[int, str | None]:
    """PU -> its owner when dedicated (None: free or shared)."""
    return {
        cpu.id: (cpu.owner or "?") if cpu.state.value == "dedicated" else None
        for node in chd.numa_nodes
        for cpu in node.cpus
    }


def _pci_holders(chd: ComputeHostDescriptor) -> dict[str, tuple[str, str | None]]:
    """PCI address -> (kind, owner when in use)."""
    out: dict[str, tuple[str, str | None]] = {}
    for node in chd.numa_nodes:
        for port in node.ports:
            used = port.usage.value == "dedicated"
            out[port.pci_address.lower()] = ("port", (port.owner or "?") if used else None)
            for vf in port.vfs:
                out[vf.pci_address.lower()] = ("vf", (vf.owner or "?") if vf.in_use else None)
        for device in node.pci_devices:
            held = (device.owner or "?") if device.in_use else None
            out[device.pci_address.lower()] = ("device", held)
    return out


def _compare(resource: str, what: str, host: str | None, inventory: str | None) -> Iterator[Drift]:
    if host is not None and inventory is None:
        yield Drift(
            resource, HOST_ONLY, f"{what} is used by running domain {host!r}, free in the inventory"
        )
    elif host is None and inventory is not None:
        yield Drift(
            resource,
            INVENTORY_ONLY,
            f"{what} is held by {inventory!r} in the inventory, no running domain uses it",
        )
    elif host is not None and inventory is not None and host != inventory:
        yield Drift(
            resource,
            OWNER_MISMATCH,
            f"{what} is held by {inventory!r} in the inventory, used by running domain {host!r}",
        )


def drift(
    host: ComputeHostDescriptor,
    inventory: ComputeHostDescriptor,
    domains: Sequence[Domain] | None,
) -> list[Drift]:
    """Where the host (as the agent reports it) and the inventory (before this report) differ."""
    out: list[Drift] = []
    if domains is not None:
        pus, pci = _users(domains)
        for pu, held in sorted(_pu_holders(inventory).items()):
            out += _compare("pu", f"PU {pu}", pus.get(pu), held)
        for address, (kind, held) in sorted(_pci_holders(inventory).items()):
            out += _compare(kind, f"{kind} {address}", pci.get(address), held)
    out += _hugepages(host, inventory)
    return out


def _pools(chd: ComputeHostDescriptor) -> dict[tuple[int, int], int]:
    return {
        (node.id, pool.size_kib): pool.used
        for node in chd.numa_nodes
        for pool in node.memory.hugepages
    }


def _hugepages(host: ComputeHostDescriptor, inventory: ComputeHostDescriptor) -> list[Drift]:
    out = []
    held = _pools(inventory)
    for (node, size), used in sorted(_pools(host).items()):
        known = held.get((node, size), 0)
        if used == known:
            continue
        side = HOST_ONLY if used > known else INVENTORY_ONLY
        out.append(
            Drift(
                "hugepages",
                side,
                f"node {node}: {used} {size} KiB pages used on the host, {known} in the inventory",
                abs(used - known),
            )
        )
    return out


def totals(found: Sequence[Drift]) -> dict[tuple[str, str], int]:
    """(resource, side) -> count, for the metric."""
    out: dict[tuple[str, str], int] = {}
    for item in found:
        out[(item.resource, item.side)] = out.get((item.resource, item.side), 0) + item.count
    return out


def summary(found: Sequence[Drift]) -> dict[str, Any]:
    return {f"{r}/{s}": n for (r, s), n in sorted(totals(found).items())}
