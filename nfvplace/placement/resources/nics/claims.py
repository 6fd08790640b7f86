"""Claiming and releasing a configuration's interfaces: vSwitch bandwidth and ports, whole ports,
VFs and the bandwidth they take off their port."""

from __future__ import annotations

from typing import Any

from ....models.configuration import InterfacePlacement, VmConfiguration
from ..draft import HostDraft


def claim_interfaces(draft: HostDraft, config: VmConfiguration, sign: int) -> None:
    for index, iface in enumerate(config.interfaces):
        path = f"interfaces[{index}]"
        if iface.mode == "vswitch":
            _vswitch(draft, iface, sign, path)
        elif iface.mode == "dedicated":
            _dedicated(draft, config.owner, iface, sign, path)
        else:
            _sriov(draft, config.owner, iface, sign, path)


def _vswitch(draft: HostDraft, iface: InterfacePlacement, sign: int, path: str) -> None:
    hypervisor = draft.section("hypervisor")
    vswitch = None if hypervisor is None else hypervisor.get("vswitch")
    if vswitch is not None and not isinstance(vswitch, dict):
        vswitch = hypervisor["vswitch"] = vswitch.model_dump(mode="python", by_alias=True)  # type: ignore[index]
    if vswitch is None:
        if sign > 0:
            draft.fail(f"host {draft.host.id} has no vSwitch", path)
        return
    vswitch["bandwidth_used_gbps"] = max(
        vswitch.get("bandwidth_used_gbps", 0.0) + sign * iface.bandwidth_gbps, 0.0
    )
    vswitch["interfaces_in_use"] = max(vswitch.get("interfaces_in_use", 0) + sign, 0)


def _dedicated(
    draft: HostDraft, owner: str, iface: InterfacePlacement, sign: int, path: str
) -> None:
    port = draft.nics.port((iface.pci_address or "").lower())
    if port is None:
        draft.fail(f"port {iface.pci_address} does not exist on {draft.host.id}", path)
    elif sign < 0:
        if port.get("owner") == owner:
            port.update(usage="free", owner=None, bandwidth_used_gbps=0.0)
    elif not port.get("eligible", True) or str(port.get("usage", "free")) != "free":
        draft.fail(f"port {iface.pci_address} is not free ({port.get('usage')})", path)
    else:
        port.update(usage="dedicated", owner=owner, bandwidth_used_gbps=port["speed_gbps"])


def _sriov(draft: HostDraft, owner: str, iface: InterfacePlacement, sign: int, path: str) -> None:
    vf = draft.nics.vf((iface.pci_address or "").lower())
    if vf is None:
        draft.fail(f"VF {iface.pci_address} does not exist on {draft.host.id}", path)
        return
    if sign > 0:
        if vf.get("in_use"):
            draft.fail(f"VF {iface.pci_address} is in use by {vf.get('owner')}", path)
            return
        vf.update(in_use=True, owner=owner)
    elif vf.get("owner") == owner:
        vf.update(in_use=False, owner=None)
    else:
        return
    pf = draft.nics.port((iface.physical_function or "").lower())
    if pf is not None:
        _charge(pf, sign, iface.bandwidth_gbps)


def _charge(port: dict[str, Any], sign: int, gbps: float) -> None:
    port["bandwidth_used_gbps"] = max(port.get("bandwidth_used_gbps", 0.0) + sign * gbps, 0.0)
    # A port that hands out a VF is shared through SR-IOV from then on; releasing the VF leaves it
    # so (its VFs stay configured: passing the whole port through would need them torn down
    # first, which is the operator's call, not a release's).
    if sign > 0 and str(port.get("usage", "free")) == "free":
        port["usage"] = "sriov"
