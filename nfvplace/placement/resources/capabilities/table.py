"""The capabilities kind's columns in the fleet index, and how versions and capabilities are coded."""

from __future__ import annotations

from dataclasses import dataclass

from ....models.capabilities import HypervisorCapability
from ..base import BoolArray, FloatArray, IntArray, Table

CAPABILITIES: tuple[HypervisorCapability, ...] = tuple(HypervisorCapability)


def version_key(version: str | None) -> float:
    """`"8.2.0"` -> 8002000.0 (three numeric parts, 1000 each); unknown -> -1."""
    if not version:
        return -1.0
    parts: list[int] = []
    for piece in version.replace("-", ".").split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(min(int(digits), 999) if digits else 0)
    while len(parts) < 3:
        parts.append(0)
    return float(parts[0] * 1_000_000 + parts[1] * 1000 + parts[2])


@dataclass(frozen=True, slots=True)
class CapabilitiesTable(Table):
    vendor: IntArray
    model: IntArray
    frequency: FloatArray
    flags: BoolArray  # hosts x flag codes
    hv_type: IntArray
    hv_version: FloatArray
    caps: BoolArray  # hosts x CAPABILITIES: present and enabled
    caps_disabled: BoolArray  # hosts x CAPABILITIES: present but not enabled
    mem_type: IntArray
    mem_speed: FloatArray
    mem_channels: FloatArray
