"""Nova's PCI pools as CHD devices and NICs (standard library only).

Nova's scheduler counts PCI devices in pools (vendor, product, NUMA node, physical network); the
CHD names each device. A pool without a physical network is that many devices of class `other`
named by vendor and product id; one with a physical network is a port with that many free VFs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any


def pools_on(view: Mapping[str, Any], node: int) -> list[Mapping[str, Any]]:
    """The PCI pools on a node (pools Nova knows no node of go to the first cell)."""
    first = min(int(c["id"]) for c in view["cells"])
    return [
        {**p, "index": k}
        for k, p in enumerate(view.get("pci_pools") or ())
        if (p.get("numa_node") if p.get("numa_node") is not None else first) == node
    ]


def _address(pool: int, n: int) -> str:
    """A made-up PCI address, unique per (pool, device): Nova's pools count devices, not name them."""
    return f"{pool:04x}:{n // 256:02x}:{(n % 256) // 8:02x}.{n % 8}"


@functools.lru_cache(maxsize=1024)
def _vf_addresses(index: int, count: int) -> tuple[str, ...]:
    return tuple(_address(index, n + 1) for n in range(count))


def _addresses(index: int, count: int) -> list[str]:
    """The addresses of a pool's VFs (kept: a fleet's pools are of a few sizes)."""
    return list(_vf_addresses(index, count))


def devices_of(pool: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "pci_address": _address(0xF000 + pool["index"], n),
            "class": "other",
            "vendor": pool["vendor_id"],
            "model": pool["product_id"],
        }
        for n in range(pool["count"])
    ]


def nic_of(pool: Mapping[str, Any]) -> dict[str, Any]:
    """A pool of VFs on a physical network, as one port with that many free VFs (its speed is not
    in Nova's pools)."""
    index = 0xE000 + pool["index"]
    return {
        "vendor": pool["vendor_id"],
        "model": pool["product_id"],
        "vendor_id": pool["vendor_id"],
        "ports": [
            {
                "pci_address": _address(index, 0),
                "speed_gbps": 0,
                "usage": "sriov",
                "physical_network": str(pool["physical_network"]),
                # as columns (`columns.py`): a VF is its address
                "vfs": {"pci_address": _addresses(index, pool["count"])},
            }
        ],
    }
