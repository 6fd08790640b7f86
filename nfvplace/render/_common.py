"""Helpers shared by the renderers: CPU lists, PCI addresses, guest vCPU layout, checks.

Everything here is pure: it reads models and returns new values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .. import errors
from ..errors import Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import CpuSetPlacement, InterfacePlacement, VmConfiguration
from ..models.vmd import InterfaceMode, VmDescriptor


def cpu_list(ids: Iterable[int]) -> str:
    """`[0, 1, 2, 5, 7, 8]` -> `0-2,5,7-8`: the list syntax of libvirt, the kernel and Nova."""
    ordered = sorted(set(ids))
    parts: list[str] = []
    start = prev = None
    for value in ordered:
        if start is None:
            start = prev = value
        elif prev is not None and value == prev + 1:
            prev = value
        else:
            parts.append(_span(start, prev))
            start = prev = value
    if start is not None:
        parts.append(_span(start, prev))
    return ",".join(parts)


def _span(start: int, end: int | None) -> str:
    return str(start) if end is None or end == start else f"{start}-{end}"


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """Inverse of `cpu_list` (used by tests and by round-trip checks)."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            out.extend(range(int(low), int(high) + 1))
        else:
            out.append(int(part))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Pci:
    domain: int
    bus: int
    slot: int
    function: int

    @classmethod
    def parse(cls, address: str) -> Pci:
        domain, bus, rest = address.split(":")
        slot, function = rest.split(".")
        return cls(int(domain, 16), int(bus, 16), int(slot, 16), int(function, 16))

    def __str__(self) -> str:
        return f"{self.domain:04x}:{self.bus:02x}:{self.slot:02x}.{self.function:x}"


def page_size_name(size_kib: int) -> str:
    """1048576 -> `1G`, 2048 -> `2M`, 64 -> `64K` (kernel command-line spelling)."""
    if size_kib % (1024 * 1024) == 0:
        return f"{size_kib // (1024 * 1024)}G"
    if size_kib % 1024 == 0:
        return f"{size_kib // 1024}M"
    return f"{size_kib}K"


@dataclass(frozen=True, slots=True)
class GuestLayout:
    """The guest's vCPUs as the configuration places them."""

    total_vcpus: int
    cpu_sets: tuple[CpuSetPlacement, ...]  # sorted by id; guest NUMA cell i is cpu_sets[i]
    shared_vcpus: tuple[int, ...]  # unpinned vCPUs (on config.shared.cpus when given)
    pins: dict[int, int]  # pinned vCPU -> host PU
    floating: dict[int, tuple[int, ...]] = field(default_factory=dict)  # vCPU -> its cpu-set's
    # shared PUs (a floating cpu-set)

    @property
    def pinned_pus(self) -> tuple[int, ...]:
        return tuple(sorted(set(self.pins.values())))

    def cell_of(self, vcpu: int) -> int | None:
        for index, cs in enumerate(self.cpu_sets):
            if vcpu in cell_vcpus(cs):
                return index
        return None


def cell_vcpus(cs: CpuSetPlacement) -> tuple[int, ...]:
    """The vCPUs of a placed cpu-set: pinned, or floating."""
    return tuple(sorted(cs.vcpu_pins)) or (cs.floating.vcpus if cs.floating else ())


def cache_ways_warnings(config: VmConfiguration, target: str) -> list[str]:
    """The cpu-sets' exclusive L3 cache ways, which `target` cannot reserve."""
    return [
        f"cpu-set {cs.id}: {cs.cache_ways.ways} exclusive L3 cache ways (Intel RDT CAT) cannot be "
        f"expressed in {target}: reserve them with `render --format host-tuning`"
        for cs in config.cpu_sets
        if cs.cache_ways is not None
    ]


def guest_layout(config: VmConfiguration) -> GuestLayout:
    """Check the configuration's vCPU numbering and return its layout.

    vCPUs must be numbered 0..N-1 with no vCPU pinned twice; floating (shared) vCPUs take the ids
    left over by the cpu-sets, in order. Raises `nfvplace.render.invalid` naming every problem.
    """
    issues: list[Issue] = []
    cpu_sets = tuple(sorted(config.cpu_sets, key=lambda cs: cs.id))
    set_ids = [cs.id for cs in cpu_sets]
    if len(set_ids) != len(set(set_ids)):
        issues.append(Issue(f"cpu-set ids repeat: {set_ids}", path="cpu_sets", hint="renumber"))
    pins = _pins(config, issues)
    floating = {v: cs.floating.cpus for cs in cpu_sets if cs.floating for v in cs.floating.vcpus}
    placed = dict.fromkeys([*pins, *floating])
    shared_count = config.shared.vcpus if config.shared else 0
    total = config.vcpus if config.vcpus is not None else len(placed) + shared_count
    _check_numbering(config, placed, total, issues)
    if issues:
        raise NfvplaceError(
            errors.RENDER_INVALID,
            f"VM Configuration {config.vm} on {config.host} cannot be rendered",
            issues=tuple(issues),
        )
    shared = tuple(v for v in range(total) if v not in placed)
    return GuestLayout(total, cpu_sets, shared, pins, floating)


def _pins(config: VmConfiguration, issues: list[Issue]) -> dict[int, int]:
    """Every pinned vCPU's PU; a vCPU pinned twice, a pair outside its cpu-set or more hugepages
    than memory are issues."""
    pins: dict[int, int] = {}
    for index, cs in enumerate(config.cpu_sets):
        for vcpu, pu in cs.vcpu_pins.items():
            if vcpu in pins:
                issues.append(
                    Issue(
                        f"vCPU {vcpu} is pinned twice",
                        path=f"cpu_sets[{index}].vcpu_pins.{vcpu}",
                        hint="each vCPU belongs to exactly one cpu-set",
                    )
                )
            pins[vcpu] = pu
        for pair in cs.howtogroup:
            missing = [v for v in pair if v not in cs.vcpu_pins]
            if missing:
                issues.append(
                    Issue(
                        f"howtogroup pair {list(pair)} names vCPU(s) {missing} that are not in "
                        f"cpu-set {cs.id}",
                        path=f"cpu_sets[{index}].howtogroup",
                        hint="pair only vCPUs of the same cpu-set",
                    )
                )
        huge = cs.hugepages.total_mib if cs.hugepages else 0
        if huge > cs.memory_mib:
            issues.append(
                Issue(
                    f"hugepages hold {huge} MiB, more than the cpu-set's {cs.memory_mib} MiB",
                    path=f"cpu_sets[{index}].hugepages",
                    hint="memory_mib is the cpu-set's whole memory, hugepages included",
                )
            )
    return pins


def _check_numbering(
    config: VmConfiguration, pins: dict[int, None], total: int, issues: list[Issue]
) -> None:
    """vCPU ids 0..total-1, as many as the configuration says, and shared vCPUs with PUs; `pins`
    are the vCPUs of the cpu-sets (pinned or floating)."""
    shared_count = config.shared.vcpus if config.shared else 0
    if config.vcpus is not None and len(pins) + shared_count > config.vcpus:
        issues.append(
            Issue(
                f"vcpus is {config.vcpus} but the cpu-sets hold {len(pins)} and shared holds "
                f"{shared_count}",
                path="vcpus",
                hint="vcpus counts every vCPU: the pinned plus the shared ones",
            )
        )
    outside = sorted(v for v in pins if v >= total)
    if outside:
        issues.append(
            Issue(
                f"vCPU ids {outside} are outside 0..{total - 1}",
                path="cpu_sets",
                hint="number vCPUs from 0 without gaps",
            )
        )
    bad_rt = sorted(v for v in config.realtime_vcpus if v >= total)
    if bad_rt:
        issues.append(
            Issue(
                f"realtime vCPUs {bad_rt} do not exist (the VM has {total})",
                path="realtime_vcpus",
                hint="list existing vCPU ids",
            )
        )
    if config.shared is not None and config.shared.vcpus and not config.shared.cpus:
        issues.append(
            Issue(
                "shared vCPUs have no host PUs to run on",
                path="shared.cpus",
                hint="list the shared PUs",
            )
        )
    if total == 0:
        issues.append(
            Issue("the configuration has no vCPUs", path="vcpus", hint="give vcpus or cpu_sets")
        )


def total_memory_mib(config: VmConfiguration) -> int:
    cells = sum(cs.memory_mib for cs in config.cpu_sets)
    shared = config.shared.memory_mib if config.shared else 0
    if config.memory_mib is not None:
        return max(config.memory_mib, cells + shared)
    return cells + shared


def require_passthrough_addresses(config: VmConfiguration) -> None:
    """Dedicated ports and VFs need the PCI address the placement chose."""
    issues = [
        Issue(
            f"interface {iface.name} ({iface.mode.value}) has no pci_address",
            path=f"interfaces[{index}].pci_address",
            hint="place the VM again: placement names the port or VF it gives the VM",
        )
        for index, iface in enumerate(config.interfaces)
        if iface.mode in (InterfaceMode.dedicated, InterfaceMode.sriov) and not iface.pci_address
    ]
    if issues:
        raise NfvplaceError(
            errors.RENDER_INVALID,
            f"VM Configuration {config.vm} on {config.host} cannot be rendered",
            issues=tuple(issues),
        )


def check_vm(config: VmConfiguration, vm: VmDescriptor | None) -> VmDescriptor | None:
    """The VM Descriptor with the configuration's variant applied; refuse a different VM.

    Without `vm`, the descriptor the configuration carries (placement records it), so that a
    configuration renders alone exactly as with `--vm`."""
    if vm is None:
        return config.descriptor
    if vm.name != config.vm:
        raise NfvplaceError(
            errors.RENDER_MISMATCH,
            f"the VM Descriptor is '{vm.name}' but the configuration places '{config.vm}'",
            issues=(Issue("wrong VM Descriptor", path="vm", hint=f"pass the VMD '{config.vm}'"),),
        )
    if config.variant:
        for variant in vm.variants:
            if variant.name == config.variant:
                return vm.with_variant(variant)
    return vm


def check_host(
    configs: Sequence[VmConfiguration], host: ComputeHostDescriptor | None
) -> ComputeHostDescriptor | None:
    if host is None:
        return None
    wrong = sorted({c.host for c in configs if c.host != host.id})
    if wrong:
        raise NfvplaceError(
            errors.RENDER_MISMATCH,
            f"the host descriptor is '{host.id}' but configurations place VMs on {wrong}",
            issues=(Issue("wrong host", path="host", hint="pass the CHD of the configured host"),),
        )
    return host


def guest_pairs(config: VmConfiguration, vm: VmDescriptor | None) -> tuple[tuple[int, int], ...]:
    """howtogroup pairs: the configuration's own, else the VM Descriptor's (same cpu-set ids)."""
    pairs = tuple(p for cs in config.cpu_sets for p in cs.howtogroup)
    if pairs or vm is None:
        return pairs
    ids = {cs.id for cs in config.cpu_sets}
    return tuple(p for cs in vm.cpu_sets if cs.id in ids for p in cs.howtogroup)


def guest_threads(layout: GuestLayout, pairs: Sequence[tuple[int, int]]) -> tuple[int, str | None]:
    """Threads per guest core (2 or 1) and, when pairs cannot be shown, why.

    A guest topology with threads=2 makes vCPUs 2k and 2k+1 siblings, so the pairs can be shown
    only when every vCPU is in a pair and every pair is such a (2k, 2k+1).
    """
    if not pairs:
        return 1, None
    paired = {v for pair in pairs for v in pair}
    unpaired = sorted(set(range(layout.total_vcpus)) - paired)
    if unpaired:
        return 1, (
            f"vCPUs {cpu_list(unpaired)} are in no howtogroup pair, so the guest topology cannot "
            "show the pairs (threads=2 would make unrelated vCPUs siblings); rendered threads=1"
        )
    misaligned = [p for p in pairs if sorted(p) != [min(p), min(p) + 1] or min(p) % 2]
    if misaligned:
        return 1, (
            f"howtogroup pairs {[list(p) for p in misaligned]} are not (2k, 2k+1), which is how a "
            "guest topology numbers sibling threads; rendered threads=1"
        )
    return 2, None


def interface_label(iface: InterfacePlacement) -> str:
    where = f"cpu-set {iface.cpu_set}" if iface.cpu_set is not None else "no cpu-set"
    return f"{iface.name} ({iface.mode.value}, {where})"
