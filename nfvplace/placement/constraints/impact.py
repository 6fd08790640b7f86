"""Impact limits of clause 8.2.2.5: at most `max_instances_per_host` instances of the descriptor on
one host, and the VM's pessimistic memory-bandwidth use within what the host's nodes have left after
the instances already running (hosts that state no node bandwidth are not limited)."""

from __future__ import annotations

from ...exact import KBPS_PER_GBPS, kbps
from .base import FilterInput, HostCheck, detail


def host_checks(inp: FilterInput) -> list[HostCheck]:
    f = inp.fleet
    impact = inp.request.vm.impact
    if impact is None:
        return []
    out = []
    name = inp.request.name
    if impact.max_instances_per_host is not None:
        limit = impact.max_instances_per_host
        counts = f.instance_counts(name)
        out.append(
            HostCheck(
                "max_instances",
                f"already run {limit} instances of {name} (its limit per host)",
                counts >= limit,
                detail(
                    lambda i, c=counts, limit=limit: (
                        f"{int(c[i])} instances of {name} already run here, at most {limit} per host",
                        float(limit),
                        float(c[i]),
                    )
                ),
            )
        )
    if impact.memory_bandwidth_gbps:
        need = impact.memory_bandwidth_gbps
        left = (f.host_membw - f.host_membw_used) / KBPS_PER_GBPS
        out.append(
            HostCheck(
                "memory_bandwidth_budget",
                f"lack {need:g} Gbps of memory-bandwidth budget",
                f.host_membw - f.host_membw_used < kbps(need),
                detail(
                    lambda i, need=need, left=left: (
                        f"{float(left[i]):g} Gbps of memory bandwidth left after the running "
                        f"instances, the VM may use {need:g}",
                        need,
                        float(left[i]),
                    )
                ),
            )
        )
    return out
