"""Which placed VM holds what on a host: the overlay drawn over a host picture.

`overlay(host, configurations)` checks that each VM Configuration is for this host, claims the ones the
descriptor does not already show as held (a host file written before placement), and maps every PU, port,
VF and hugepage share to the VM holding it, with the vCPU or interface it serves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import errors
from ..claims import claim
from ..errors import Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from .svg import vm_colour


@dataclass(frozen=True, slots=True)
class Mark:
    """One resource held by a VM: `vm` indexes `Overlay.vms`, `label` is short, `detail` a sentence."""

    vm: int
    label: str
    detail: str


@dataclass(frozen=True, slots=True)
class PlacedVm:
    owner: str
    vm: str
    colour: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Overlay:
    host: ComputeHostDescriptor  # with every configuration claimed
    vms: tuple[PlacedVm, ...] = ()
    pus: dict[int, Mark] = field(default_factory=dict)
    devices: dict[str, Mark] = field(default_factory=dict)  # port or VF PCI address
    shared_pus: dict[int, tuple[int, ...]] = field(default_factory=dict)
    # PU -> the VMs (indexes of `vms`) whose floating vCPUs may run on it
    hugepages: dict[tuple[int, int], tuple[tuple[int, int], ...]] = field(default_factory=dict)
    # (node, size_kib) -> ((vm, pages), ...)
    prefix: str = ""  # of element ids, so that several hosts in one document keep them unique


def _already_claimed(host: ComputeHostDescriptor, config: VmConfiguration) -> bool:
    """Claiming records the owner among the host's instances (see `claims.claim`)."""
    return config.owner in {instance.id for instance in host.instances}


def _summary(config: VmConfiguration) -> tuple[str, ...]:
    lines = []
    for cs in config.cpu_sets:
        pages = ""
        if cs.hugepages:
            pages = f", {cs.hugepages.count} x {size_label(cs.hugepages.size_kib)} pages"
        lines.append(
            f"cpu-set {cs.id} on NUMA {cs.numa_node}: {len(cs.vcpu_pins)} vCPUs"
            f" on PUs {ranges(sorted(cs.vcpu_pins.values()))}{pages}"
        )
    if config.shared:
        lines.append(f"{config.shared.vcpus} shared vCPUs on PUs {ranges(config.shared.cpus)}")
    for iface in config.interfaces:
        where = iface.pci_address or "vSwitch"
        kind = {"sriov": "VF", "dedicated": "port"}.get(str(iface.mode), str(iface.mode))
        lines.append(f"{iface.name}: {kind} {where}")
    return tuple(lines)


def overlay(
    host: ComputeHostDescriptor, configurations: Sequence[VmConfiguration], prefix: str = ""
) -> Overlay:
    """The overlay of `configurations` on `host` (raises NfvplaceError naming a foreign one)."""
    for k, config in enumerate(configurations):
        if config.host != host.id:
            raise NfvplaceError(
                errors.INPUT_REFERENCE,
                f"configuration of {config.owner} is for host {config.host!r}, not {host.id!r}",
                issues=(Issue("draw it on its own host", path=f"configurations[{k}].host"),),
            )
        if not _already_claimed(host, config):
            host = claim(host, config)
    vms: list[PlacedVm] = []
    pus: dict[int, Mark] = {}
    devices: dict[str, Mark] = {}
    pages: dict[tuple[int, int], list[tuple[int, int]]] = {}
    shared: dict[int, list[int]] = {}
    for k, config in enumerate(configurations):
        owner = config.owner
        vms.append(PlacedVm(owner, config.vm, vm_colour(k), _summary(config)))
        for cs in config.cpu_sets:
            for vcpu, pu in cs.vcpu_pins.items():
                pus[pu] = Mark(k, f"v{vcpu}", f"{owner} vCPU {vcpu} (cpu-set {cs.id})")
            for pu in cs.reserved_siblings:
                pus[pu] = Mark(k, "idle", f"{owner}: sibling kept idle (isolate)")
            if cs.hugepages:
                key = (cs.numa_node, cs.hugepages.size_kib)
                pages.setdefault(key, []).append((k, cs.hugepages.count))
        for pu in config.emulator_pins:
            pus[pu] = Mark(k, "emu", f"{owner} emulator threads")
        for pu in config.shared.cpus if config.shared else ():
            shared.setdefault(pu, []).append(k)
        for iface in config.interfaces:
            if iface.pci_address:
                devices[iface.pci_address] = Mark(
                    k, iface.name, f"{owner} interface {iface.name} ({iface.mode})"
                )
    return Overlay(
        host=host,
        vms=tuple(vms),
        pus=pus,
        devices=devices,
        hugepages={key: tuple(v) for key, v in pages.items()},
        shared_pus={pu: tuple(vms) for pu, vms in shared.items()},
        prefix=prefix,
    )


def size_label(size_kib: int) -> str:
    if size_kib % (1024 * 1024) == 0:
        return f"{size_kib // (1024 * 1024)} GiB"
    if size_kib % 1024 == 0:
        return f"{size_kib // 1024} MiB"
    return f"{size_kib} KiB"


def ranges(ids: Sequence[int]) -> str:
    """`[1, 2, 3, 7]` -> `1-3,7`."""
    out: list[str] = []
    ordered = sorted(set(ids))
    k = 0
    while k < len(ordered):
        j = k
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[k]) if j == k else f"{ordered[k]}-{ordered[j]}")
        k = j + 1
    return ",".join(out)
