"""PCI devices other than NICs (e.g. crypto accelerators, annex A of the seed): a request naming a
cpu-set needs that many free eligible devices of its class (and vendor/model when given) on the
cpu-set's node; the others on any node. A request's `numa_affinity` (Nova's PCI NUMA affinity
policies) says it relative to the nodes of its cpu-set, or of every cpu-set when it names none:
`required`/`legacy` on one of them, `socket` on a node of the same socket (the package of the
node's PUs; a node without one is a socket of its own), `preferred` anywhere with a cost for
each device off them (`pci_remote`), so that a local device is taken when one is free.

The filter counts matching devices per host and per node (reason `pci_device`, with the numbers); the
exact model has a boolean per (request, matching device) so that requests that could take the same
device never count it twice. The chosen device ids are read back from the model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...models.chd import ComputeHostDescriptor, NumaNode
from ...models.configuration import VmConfiguration
from ...models.vmd import NumaAffinity, PciDeviceRequest
from ..reasons import Reason
from ..request import CpuSetDemand, Part, Request
from . import affinity
from .base import HostFree, IndexedFleet, IntArray, Table, Vocabulary, node_parts, same_objects
from .draft import AssignmentError, ConfigurationDraft, DescriptorDraft, HostDraft, touch
from .filtering import FilterInput, HostCheck, NodeNeed, detail
from .holding import PCI, HeldUnit
from .kind import Decisions, Kind
from .kubelet import KubeletPool
from .model import Layout, ModelContext, ReadBack
from .rows import rows_sum


@dataclass(frozen=True, slots=True)
class FreeDevice:
    pci_address: str
    device_class: str
    vendor: str | None
    model: str | None


@dataclass(frozen=True, slots=True)
class DevicesFree:
    nodes: tuple[tuple[FreeDevice, ...], ...]  # by node slot
    sockets: tuple[int, ...]  # the socket of each node slot (`_sockets`)


@dataclass(frozen=True, slots=True)
class DevicesTable(Table):
    # per host, only where there are any: (slot, class, vendor, model) of each free device
    devices: dict[int, tuple[tuple[int, str, str, str], ...]]


def _node_free(node: NumaNode) -> tuple[FreeDevice, ...]:
    return tuple(
        FreeDevice(d.pci_address, str(d.device_class), d.vendor, d.model)
        for d in node.pci_devices
        if d.eligible and not d.in_use
    )


def matches(device: FreeDevice, want: PciDeviceRequest) -> bool:
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


DEVICE_CHOICES: ReadBack[tuple[int, str, int]] = ReadBack("devices")
"""The devices the model may give, read back after the solve: (request index, PCI address, node)."""


class DevicesKind(Kind):
    name = "devices"
    reasons = (Reason.pci_device,)
    family = "PCI devices (a device serves one request)"
    costs = {affinity.COST: affinity.COST_TEXT}

    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> DevicesTable:
        return DevicesTable({})

    def fill(
        self,
        t: DevicesTable,
        i: int,
        host: ComputeHostDescriptor,
        free: HostFree,
        vocab: Vocabulary,
    ) -> None:
        found = [
            (j, d.device_class, (d.vendor or "").lower(), (d.model or "").lower())
            for j, node in enumerate(free.of(self).nodes)
            for d in node
        ]
        t.devices.pop(i, None)
        if found:
            t.devices[i] = tuple(found)

    def free(self, host: ComputeHostDescriptor) -> DevicesFree:
        return DevicesFree(tuple(map(_node_free, host.numa_nodes)), affinity.sockets(host))

    def free_claimed(
        self,
        before: ComputeHostDescriptor,
        free_before: DevicesFree,
        config: VmConfiguration,
        after: ComputeHostDescriptor | None,
    ) -> DevicesFree | None:
        # a claim keeps every PU's package (the sockets): only devices given change the part
        return None if config.pci_devices else free_before

    def free_again(
        self, host: ComputeHostDescriptor, before: ComputeHostDescriptor, free_before: DevicesFree
    ) -> DevicesFree:
        nodes = node_parts(
            host,
            before,
            free_before.nodes,
            lambda node, old, _part: same_objects(node.pci_devices, old.pci_devices),
            lambda _slot, node: _node_free(node),
        )
        sockets = affinity.sockets_again(host, before, free_before.sockets)
        if nodes is free_before.nodes and sockets is free_before.sockets:
            return free_before
        return DevicesFree(nodes, sockets)

    def host_checks(self, inp: FilterInput) -> list[HostCheck]:
        out = []
        for k, want in enumerate(inp.request.vm.pci_devices):
            counts = rows_sum(self._counted(inp.fleet, want))
            out.append(
                HostCheck(
                    Reason.pci_device,
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

    def node_needs(self, inp: FilterInput, part: Part) -> list[NodeNeed]:
        if not isinstance(part, CpuSetDemand):
            return []
        out = []
        for want in inp.request.vm.pci_devices:
            if want.cpu_set != part.id or want.numa_affinity not in affinity.LOCAL:
                continue
            counts = self._counted(inp.fleet, want)
            out.append(
                NodeNeed(
                    Reason.pci_device,
                    describe(want),
                    counts >= want.count,
                    counts,
                    want.count,
                    f"free {want.device_class} devices of that kind",
                )
            )
        return out

    def _counted(self, fleet: IndexedFleet, want: PciDeviceRequest) -> IntArray:
        """Free devices matching `want` per host x node slot."""
        out = np.zeros(fleet.node_id.shape, dtype=np.int64)
        cls = str(want.device_class)
        vendor = (want.vendor or "").lower()
        model = (want.model or "").lower()
        for i, devices in fleet.table(self).devices.items():
            for slot, d_cls, d_vendor, d_model in devices:
                if d_cls == cls and vendor in ("", d_vendor) and model in ("", d_model):
                    out[i, slot] += 1
        return out

    def in_model(self, request: Request) -> bool:
        return bool(request.vm.pci_devices)

    def post_limits(self, ctx: ModelContext) -> None:
        """x[k, d]: request k takes device d; each device once, each request its count, near the
        VM's nodes as its affinity says."""
        takers: dict[str, list[Any]] = {}
        free = ctx.free.of(self)
        for k, want in enumerate(ctx.request.vm.pci_devices):
            chosen = []
            for slot, node in enumerate(ctx.free.node_ids):
                near = affinity.near(ctx, want.cpu_set, want.numa_affinity, node, free.sockets)
                if near == [] and want.numa_affinity is not NumaAffinity.preferred:
                    continue  # no cpu-set of the VM can make this node near
                for dev in free.nodes[slot]:
                    if matches(dev, want):
                        x = ctx.model.new_bool_var(f"device[{k}->{dev.pci_address}]")
                        affinity.post_locality(ctx, want.numa_affinity, x, near)
                        ctx.keep(DEVICE_CHOICES, (k, dev.pci_address, node), x)
                        takers.setdefault(dev.pci_address, []).append(x)
                        chosen.append(x)
            ctx.model.add(sum(chosen) == want.count) if chosen else ctx.model.add_bool_or([])
        for users in takers.values():
            if len(users) > 1:
                ctx.model.add_at_most_one(users)

    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None:
        """The devices the model chose, in request order."""
        classes = {d.pci_address: d.device_class for node in free.of(self).nodes for d in node}
        kept = layout.of(DEVICE_CHOICES) if layout else {}
        chosen = sorted(key for key, v in kept.items() if v)
        out = []
        for k, address, node in chosen:
            want = request.vm.pci_devices[k]
            out.append(
                {
                    "pci_address": address,
                    "class": classes[address],
                    "numa_node": node,
                    "cpu_set": want.cpu_set,
                }
            )
        if len(out) != sum(w.count for w in request.vm.pci_devices):
            raise AssignmentError("the model chose fewer PCI devices than requested")
        draft.fields["pci_devices"] = tuple(out)

    def counts(self, request: Request) -> bool:
        return not request.vm.pci_devices

    def describe(self, draft: DescriptorDraft, config: VmConfiguration) -> None:
        classes: dict[str, int] = {}
        for device in config.pci_devices:
            classes[device.device_class] = classes.get(device.device_class, 0) + 1
        draft.fields["pci_devices"] = [{"class": c, "count": n} for c, n in classes.items()]

    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None:
        for index, device in enumerate(config.pci_devices):
            node = draft.nodes.get(device.numa_node)
            entries: list[Any] = (node or {}).get("pci_devices", [])
            address = device.pci_address.lower()
            at = next(
                (
                    k
                    for k, d in enumerate(entries)
                    if (d["pci_address"] if isinstance(d, dict) else d.pci_address).lower()
                    == address
                ),
                None,
            )
            path = f"pci_devices[{index}]"
            if at is None:
                draft.fail(
                    f"PCI device {device.pci_address} does not exist on {draft.host.id}", path
                )
                continue
            entry = touch(entries, at)
            if sign < 0:
                if entry.get("owner") == config.owner:
                    entry.update(in_use=False, owner=None)
            elif entry.get("in_use") or not entry.get("eligible", True):
                draft.fail(f"PCI device {device.pci_address} is not free", path)
            else:
                entry.update(in_use=True, owner=config.owner)

    def held_units(self, config: VmConfiguration) -> Iterable[HeldUnit]:
        """Its PCI devices, by address."""
        return (HeldUnit(PCI, d.pci_address.lower()) for d in config.pci_devices)

    def owners(self, host: ComputeHostDescriptor) -> Iterable[str]:
        return (d.owner for node in host.numa_nodes for d in node.pci_devices if d.owner)

    def kubelet_pools(self, host: ComputeHostDescriptor, node: NumaNode) -> Iterable[KubeletPool]:
        """The device manager's: an eligible PCI device under its model's name."""
        for device in node.pci_devices:
            if device.model and device.eligible:
                yield KubeletPool("device", device.model, 1, int(not device.in_use))


DEVICES = DevicesKind()

__all__ = ["DEVICES", "DevicesKind", "FreeDevice", "describe", "matches"]
