"""Clause 8 items nfvplace keeps but does not use in placement (NFV050, information only).

Every clause 8 item either constrains or ranks placement, or, when a descriptor sets it, lint says
that nfvplace only records it: nothing is ignored silently. `docs/clause8.md` maps every item.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...models.chd import ComputeHostDescriptor
from ...models.loading import PathKey
from ...models.vmd import VmDescriptor
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "information"

INFORMATION_ONLY = Rule(
    "NFV050",
    Severity.info,
    FAMILY,
    "A clause 8 item nfvplace records but does not use in placement (information only)",
    "nothing to fix; see docs/clause8.md for what each item does",
    "8",
)
RULES = (INFORMATION_ONLY,)

# (path, clause, what the item is) of the items that neither constrain nor rank placement
VMD_ITEMS: tuple[tuple[PathKey, str, str], ...] = (
    (("storage",), "8.2.2.4", "storage (no host storage inventory to check it against)"),
    (("impact", "interconnect_bandwidth_gbps"), "8.2.2.5", "interconnect bandwidth impact"),
    (("impact", "benchmark_class"), "8.2.2.5", "interference benchmark class"),
    (("impact", "cache_occupancy_kib"), "8.2.2.5", "last-level cache occupancy"),
)
CHD_ITEMS: tuple[tuple[PathKey, str, str], ...] = (
    (("processor", "cache"), "8.1.1.1", "processor and core cache sizes"),
    (("processor", "tlb"), "8.1.1.1", "TLB and IOTLB sizes"),
    (("memory", "total_mib"), "8.1.1.2", "installed memory (placement uses each node's pools)"),
)
PORT_ITEMS: tuple[tuple[str, str], ...] = (
    ("vswitch_mode", "vSwitch bridge or NAT mode"),
    ("vswitch_interfaces_in_use", "virtual interfaces in use on the vSwitch"),
)


def _value(model: object, path: PathKey) -> object:
    for step in path:
        model = getattr(model, str(step), None)
        if model is None:
            return None
    return model


def _hits(model: object, items: tuple[tuple[PathKey, str, str], ...]) -> Iterator[Hit]:
    for path, clause, what in items:
        value = _value(model, path)
        if value not in (None, (), {}):
            yield INFORMATION_ONLY.hit(
                path, f"clause {clause} {what}: recorded, not used in placement"
            )


def check_vmd(vm: VmDescriptor) -> Iterator[Hit]:
    yield from _hits(vm, VMD_ITEMS)


def check_chd(host: ComputeHostDescriptor) -> Iterator[Hit]:
    yield from _hits(host, CHD_ITEMS)
    for n, node in enumerate(host.numa_nodes):
        for k, nic in enumerate(node.nics):
            for p, port in enumerate(nic.ports):
                for field, what in PORT_ITEMS:
                    if getattr(port, field) not in (None, 0):
                        path = ("numa_nodes", n, "nics", k, "ports", p, field)
                        yield INFORMATION_ONLY.hit(
                            path, f"clause 8.1.1.4 {what}: recorded, not used in placement"
                        )
