"""`place --explain`: a table with one row per host saying, in plain words, why the winner won and
why each other host was not chosen, with the numbers.

Each host is judged on its own (the same engine, policy and seed, on that host alone): a host that
cannot take the VM shows its first blocking reason with its code; a host that could shows how full
it is, which is what the policy ranks. For one VM Descriptor, and for each VM of a VNF or a batch
(on the fleet before the placement). Pure: descriptors and a result in, lines out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..models.chd import ComputeHostDescriptor
    from ..models.vmd import VmDescriptor
    from ..placement.result import PlacementResult

MAX_ROWS = 50
PREFERS = {
    "pack": "pack prefers the fullest host that fits",
    "spread": "spread prefers the emptiest host",
    "least-fragmentation": "least-fragmentation prefers the tightest fit on one NUMA node",
}
# order of the rows: the winner, the hosts that could have taken the VM, the hosts that could not
CHOSEN, FITS, REJECTED = 0, 1, 2


def _fill(host: ComputeHostDescriptor) -> tuple[int, int]:
    """(free, total) eligible threads of the host: what `pack` and `spread` rank on."""
    eligible = [pu for node in host.numa_nodes for pu in node.cpus if pu.eligible]
    return sum(1 for pu in eligible if pu.state == "free"), len(eligible)


def _row(
    host: ComputeHostDescriptor, vm: VmDescriptor, chosen: str | None, policy: str, seed: int
) -> tuple[int, int, str, str, str]:
    from ..placement import place

    free, total = _fill(host)
    fill = f"{free} of {total} eligible threads free"
    if host.id == chosen:
        return CHOSEN, free, host.id, "chosen", f"{fill}; {PREFERS.get(policy, policy)}"
    alone = place([host], vm, policy=policy, seed=seed)
    if alone.ok:
        return FITS, free, host.id, "fits, not chosen", f"{fill}; ranked after {chosen}"
    rejections = alone.diagnosis.rejections if alone.diagnosis else ()
    why = f"{rejections[0].message} [{rejections[0].reason}]" if rejections else "does not fit"
    return REJECTED, free, host.id, "rejected", why


def host_table(
    hosts: Sequence[ComputeHostDescriptor],
    vm: VmDescriptor,
    result: PlacementResult | None,
    *,
    policy: str,
    seed: int,
    chosen: str | None = None,
) -> list[str]:
    """The table's lines, header first: the chosen host, then the hosts that fit in the order the
    policy ranks them, then the rejected ones (at most `MAX_ROWS` hosts, in the order given).
    The chosen host is the result's, or `chosen` (the host of a VNF member)."""
    if result is not None:
        chosen = result.configurations[0].host if result.ok else None
    shown = list(hosts[:MAX_ROWS])
    if chosen is not None and all(h.id != chosen for h in shown):
        shown[-1:] = [h for h in hosts if h.id == chosen]
    rows = [_row(host, vm, chosen, policy, seed) for host in shown]
    rows.sort(key=lambda row: (row[0], row[1] if policy == "pack" else -row[1]))
    width = max([len("host"), *(len(r[2]) for r in rows)])
    verdict = max([len("verdict"), *(len(r[3]) for r in rows)])
    lines = [f"{'host':<{width}}  {'verdict':<{verdict}}  why"]
    lines.extend(f"{h:<{width}}  {v:<{verdict}}  {why}" for _, _, h, v, why in rows)
    if len(hosts) > len(shown):
        lines.append(f"... and {len(hosts) - len(shown)} more hosts (the table shows {len(shown)})")
    return lines
