"""Exact ports and VFs after the solve: the port the model chose for each interface, and on it the
free VF paced closest above the interface's bandwidth."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....models.vmd import InterfaceMode
from ...request import InterfaceDemand, Request
from ..draft import AssignmentError, ConfigurationDraft
from .ports import FreePort, NicsFree, match_vfs


def chosen_ports(values: Mapping[tuple[str, str], int]) -> dict[str, str]:
    """Interface name -> PCI address of the port the model chose."""
    return {iface: port for (iface, port), value in values.items() if value}


def assign_interfaces(
    draft: ConfigurationDraft,
    free: NicsFree,
    request: Request,
    nodes: Mapping[int, int],
    chosen: dict[str, str],
) -> None:
    ports = {p.pci_address: p for n in free.nodes for p in n.ports}
    vfs = _vfs(ports, request, chosen)
    out: list[dict[str, Any]] = []
    for iface in request.interfaces:
        entry: dict[str, Any] = {"name": iface.name, "cpu_set": iface.cpu_set, "mode": iface.mode}
        if iface.mode is InterfaceMode.vswitch:
            node = nodes.get(iface.cpu_set) if iface.cpu_set is not None else None
            entry.update(
                numa_node=node if iface.restricted else None,
                bandwidth_gbps=iface.bandwidth_gbps,
                vhost_user=free.vswitch_accelerated,
            )
        elif iface.name not in chosen:
            raise AssignmentError(f"interface {iface.name} has no port")
        else:
            port = ports[chosen[iface.name]]
            entry["numa_node"] = port.node
            if iface.mode is InterfaceMode.dedicated:
                entry.update(
                    pci_address=port.pci_address,
                    bandwidth_gbps=iface.bandwidth_gbps or port.speed_gbps,
                )
            else:
                entry.update(
                    pci_address=vfs[iface.name],
                    physical_function=port.pci_address,
                    bandwidth_gbps=iface.bandwidth_gbps,
                )
        out.append(entry)
    draft.fields["interfaces"] = tuple(out)


def _vfs(ports: dict[str, FreePort], request: Request, chosen: dict[str, str]) -> dict[str, str]:
    """The VF of each SR-IOV interface (a VF paced below a demand cannot serve it)."""
    users: dict[str, list[InterfaceDemand]] = {}
    for iface in request.interfaces:
        if iface.mode is InterfaceMode.sriov and iface.name in chosen:
            users.setdefault(chosen[iface.name], []).append(iface)
    out: dict[str, str] = {}
    for address, ifaces in users.items():
        port = ports[address]
        matched = match_vfs(port.vf_rates_kbps, [i.bandwidth_kbps for i in ifaces])
        if matched is None:
            raise AssignmentError(
                f"interfaces {', '.join(i.name for i in ifaces)}: no free VFs of {address} fit"
            )
        out.update((i.name, port.free_vfs[k]) for i, k in zip(ifaces, matched, strict=True))
    return out
