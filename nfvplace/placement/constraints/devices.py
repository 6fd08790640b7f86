"""PCI devices other than NICs (e.g. crypto accelerators, annex A of the seed): a request naming a
cpu-set needs that many free eligible devices of its class (and vendor/model when given) on the
cpu-set's node; the others on any node.

The filter counts matching devices per host and per node (reason `pci_device`, with the numbers); the
exact model has a boolean per (request, matching device) so that requests that could take the same
device never count it twice. The chosen device ids are read back from the model (`assign.py`).
"""

from __future__ import annotations

import numpy as np

from ...models.vmd import PciDeviceRequest
from ..hostview import DeviceView
from ..index import FleetIndex, IntArray
from ..request import CpuSetDemand
from .base import FilterInput, HostCheck, ModelContext, NodeNeed, detail


def matches(device: DeviceView, want: PciDeviceRequest) -> bool:
    if device.device_class != str(want.device_class):
        return False
    if want.vendor and (device.vendor or "").lower() != want.vendor.lower():
        return False
    return not (want.model and (device.model or "").lower() != want.model.lower())


def describe(want: PciDeviceRequest) -> str:
    """`2 free crypto devices (vendor Intel, model QAT C62x)`."""
    what = [f"vendor {want.vendor}"] if want.vendor else []
    what += [f"model {want.model}"] if want.model else []
    plural = "s" if want.count > 1 else ""
    return f"{want.count} free {want.device_class} device{plural}" + (
        f" ({', '.join(what)})" if what else ""
    )


def device_counts(fleet: FleetIndex, want: PciDeviceRequest) -> IntArray:
    """Free devices matching `want` per host x node slot."""
    out = np.zeros(fleet.node_id.shape, dtype=np.int64)
    cls = str(want.device_class)
    vendor = (want.vendor or "").lower()
    model = (want.model or "").lower()
    for i, devices in fleet.devices.items():
        for slot, d_cls, d_vendor, d_model in devices:
            if d_cls == cls and vendor in ("", d_vendor) and model in ("", d_model):
                out[i, slot] += 1
    return out


def host_checks(inp: FilterInput) -> list[HostCheck]:
    out = []
    for k, want in enumerate(inp.request.vm.pci_devices):
        counts = device_counts(inp.fleet, want).sum(axis=1)
        out.append(
            HostCheck(
                "pci_device",
                f"lack {describe(want)}",
                counts < want.count,
                detail(
                    lambda i, c=counts, w=want, k=k: (
                        f"pci_devices[{k}] needs {describe(w)}; the host has {int(c[i])}",
                        float(w.count),
                        float(c[i]),
                    )
                ),
            )
        )
    return out


def node_needs(inp: FilterInput, cs: CpuSetDemand) -> list[NodeNeed]:
    out = []
    for want in inp.request.vm.pci_devices:
        if want.cpu_set != cs.id:
            continue
        counts = device_counts(inp.fleet, want)
        out.append(
            NodeNeed(
                "pci_device",
                describe(want),
                counts >= want.count,
                counts,
                want.count,
                f"free {want.device_class} devices of that kind",
            )
        )
    return out


def post(ctx: ModelContext) -> None:
    """x[k, d]: request k takes device d; each device once, each request its count, on its
    cpu-set's node when it names one."""
    wants = ctx.request.vm.pci_devices
    if not wants:
        return
    m = ctx.model
    takers: dict[str, list[object]] = {}
    for k, want in enumerate(wants):
        chosen = []
        for node in ctx.view.nodes:
            y = ctx.placed(want.cpu_set, node.id) if want.cpu_set is not None else None
            if want.cpu_set is not None and y is None:
                continue
            for dev in node.devices:
                if not matches(dev, want):
                    continue
                x = m.new_bool_var(f"device[{k}->{dev.pci_address}]")
                if y is not None:
                    m.add_implication(x, y)
                ctx.devices[(k, dev.pci_address, node.id)] = x
                takers.setdefault(dev.pci_address, []).append(x)
                chosen.append(x)
        m.add(sum(chosen) == want.count) if chosen else m.add_bool_or([])
    for users in takers.values():
        if len(users) > 1:
            m.add_at_most_one(users)  # type: ignore[arg-type]
