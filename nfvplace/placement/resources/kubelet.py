"""What the kubelet's managers hand out on one NUMA node, as a kind reads it from a CHD.

The Kubernetes door (`integrations/kubernetes/state.py`) does not place with the kinds: it
simulates the kubelet's CPU, memory and device managers on counts. Each kind whose resource the
kubelet hands out says here, through its `kubelet_pools` hook (the `KubeletCounts` stage), which
pools of which resource a node of a CHD holds; the door adds them up and takes assumed pods from
them. Amounts are the kubelet's units: CPUs, bytes of memory or hugepages, devices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MIB = 2**20

Manager = Literal["cpu", "memory", "device"]
"""The kubelet manager that hands a resource out (the CPU, memory or device manager)."""


@dataclass(frozen=True, slots=True)
class KubeletPool:
    """One resource on one NUMA node: how much the kubelet may hand out and how much is free.
    `total` is the node's CPUs, exclusive or not (the CPU manager's hints count them all);
    `in_use` says some of the node's memory is given out already (the memory manager's groups)."""

    manager: Manager
    resource: str  # the kubelet's name: `cpu`, `memory`, `hugepages-1Gi`, a device plugin's
    allocatable: int
    free: int
    total: int = 0
    in_use: bool = False


def hugepages_name(size_kib: int) -> str:
    """1048576 -> `hugepages-1Gi`, 2048 -> `hugepages-2Mi` (the kubelet's resource names)."""
    for unit, factor in (("Gi", 1024 * 1024), ("Mi", 1024), ("Ki", 1)):
        if size_kib % factor == 0:
            return f"hugepages-{size_kib // factor}{unit}"
    raise AssertionError("unreachable: 1 KiB divides every size")
