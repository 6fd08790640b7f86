"""PCI ids discovery needs: which functions are NICs, which are SR-IOV virtual functions, vendor names.

hwloc cannot tell a VF from a PF: in an XML export a VF is an ordinary PCIDev, usually with no OS
device. We recognise VFs by the vendor:device ids below (the ids the vendors assign to their VFs), and on
a live host by sysfs (`physfn` / `virtfn*` links), which is exact. `docs/discovery.md` carries this
table too; keep both in step.
"""

from __future__ import annotations

from typing import Final

# vendor:device -> what it is. Every id here is a virtual function only (never a PF).
VF_DEVICE_IDS: Final[dict[str, str]] = {
    # Cisco VIC usNIC VFs (vendor 1138 also appears for the same VF in some firmware)
    "1137:00cf": "Cisco VIC usNIC VF",
    "1138:00cf": "Cisco VIC usNIC VF",
    "1137:0071": "Cisco VIC SR-IOV VF",
    # Intel
    "8086:10ca": "Intel 82576 VF",
    "8086:10ed": "Intel 82599 VF",
    "8086:1515": "Intel X540 VF",
    "8086:1520": "Intel I350 VF",
    "8086:152e": "Intel 82576 VF (Hyper-V)",
    "8086:154c": "Intel XL710/X710/XXV710 VF (iavf)",
    "8086:1565": "Intel X550 VF",
    "8086:15a8": "Intel X552 VF",
    "8086:1571": "Intel XL710 VF (Hyper-V)",
    "8086:1889": "Intel Ethernet Adaptive VF (E810, iavf)",
    "8086:37cd": "Intel X722 VF",
    # Mellanox / NVIDIA ConnectX
    "15b3:1002": "Mellanox ConnectX-2 VF",
    "15b3:1004": "Mellanox ConnectX-3 VF",
    "15b3:1008": "Mellanox ConnectX-3 Pro VF",
    "15b3:1012": "Mellanox ConnectX-4 VF",
    "15b3:1014": "Mellanox ConnectX-4 Lx VF",
    "15b3:1016": "Mellanox ConnectX-5 VF",
    "15b3:1018": "Mellanox ConnectX-5 Ex VF",
    "15b3:101a": "Mellanox ConnectX-6 VF",
    "15b3:101c": "Mellanox ConnectX-6 Dx VF",
    "15b3:101e": "Mellanox ConnectX family VF",
    # Broadcom NetXtreme-E
    "14e4:16c1": "Broadcom NetXtreme-E VF",
    "14e4:16dc": "Broadcom NetXtreme-E VF",
    "14e4:1806": "Broadcom NetXtreme-E VF",
    "14e4:1807": "Broadcom NetXtreme-E VF",
    # QLogic/Marvell, Solarflare
    "1077:8090": "QLogic FastLinQ VF",
    "1924:1903": "Solarflare SFC9120 VF",
}

# Vendors whose VF ids are on a sibling vendor id (the VF belongs to a PF of the main vendor).
VENDOR_FAMILY: Final[dict[str, str]] = {"1138": "1137"}

VENDOR_NAMES: Final[dict[str, str]] = {
    "8086": "Intel",
    "15b3": "Mellanox",
    "14e4": "Broadcom",
    "1137": "Cisco",
    "1138": "Cisco",
    "1077": "QLogic",
    "1924": "Solarflare",
    "1af4": "Red Hat (virtio)",
    "1d0f": "Amazon",
    "19e5": "Huawei",
    "10ec": "Realtek",
    "1425": "Chelsio",
    "177d": "Cavium",
    "10de": "NVIDIA",
    "1002": "AMD",
    "1022": "AMD",
    "1fc9": "Tehuti",
    "1c36": "Annapurna Labs",
}


def is_network_class(class_id: int) -> bool:
    """PCI class 02xx (network controller) or 0c06 (InfiniBand, as older HCAs report)."""
    return class_id >> 8 == 0x02 or class_id == 0x0C06


def device_key(vendor_id: str, device_id: str) -> str:
    return f"{vendor_id.lower()}:{device_id.lower()}"


def is_known_vf(vendor_id: str, device_id: str) -> bool:
    return device_key(vendor_id, device_id) in VF_DEVICE_IDS


def vendor_family(vendor_id: str) -> str:
    return VENDOR_FAMILY.get(vendor_id.lower(), vendor_id.lower())


def vendor_name(vendor_id: str, reported: str | None = None) -> str:
    """The vendor's name as the source reports it, else from our short table, else the id."""
    if reported:
        return reported
    return VENDOR_NAMES.get(vendor_id.lower(), f"PCI vendor {vendor_id.lower()}")
