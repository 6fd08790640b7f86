"""PCI devices other than NICs (e.g. crypto accelerators, annex A of the seed): a request naming a
cpu-set needs that many free eligible devices of its class (and vendor/model when given) on the
cpu-set's node; the others on any node. The exact device ids are chosen after the solve."""

from __future__ import annotations

from ...models.vmd import PciDeviceRequest
from ..hostview import DeviceView
from .base import ModelContext


def matches(device: DeviceView, want: PciDeviceRequest) -> bool:
    if device.device_class != str(want.device_class):
        return False
    if want.vendor and (device.vendor or "").lower() != want.vendor.lower():
        return False
    return not (want.model and (device.model or "").lower() != want.model.lower())


def post(ctx: ModelContext) -> None:
    wants = ctx.request.vm.pci_devices
    if not wants:
        return
    m = ctx.model
    total = {
        k: sum(1 for n in ctx.view.nodes for d in n.devices if matches(d, w))
        for k, w in enumerate(wants)
    }
    for k, want in enumerate(wants):
        if total[k] < want.count:
            m.add_bool_or([])  # not enough on the whole host
        if want.cpu_set is None:
            continue
        for node in ctx.view.nodes:
            y = ctx.placed(want.cpu_set, node.id)
            if y is None:
                continue
            here = sum(1 for d in node.devices if matches(d, want))
            if here < want.count:
                m.add(y == 0)
