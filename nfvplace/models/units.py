"""Quantities with units.

A field whose name carries a unit (`memory_mib`, `speed_gbps`) takes a plain number in that unit or a
string with an explicit unit (`"10GiB"`, `"100 Mbps"`), which is converted. A field without a unit
suffix (`hugepages.size`) takes a string with a unit and is written back in canonical form (`1GiB`).

Decimal memory units (`GB`, `MB`, `TB`) are read as their binary counterparts, as NFV-PER 001's own
figure 8 writes them (`total: 10GB` meaning 10 GiB); `nfvplace lint` warns about it (NFV002).
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, PlainSerializer, WithJsonSchema

_NUMBER = r"(?P<num>[0-9]+(?:\.[0-9]+)?)"
_QUANTITY = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>[A-Za-z]*)\s*$")

# Memory units in KiB. Decimal spellings are deliberately binary (see module docstring).
MEMORY_UNITS_KIB: dict[str, int] = {
    "k": 1,
    "kib": 1,
    "kb": 1,
    "m": 1024,
    "mib": 1024,
    "mb": 1024,
    "g": 1024**2,
    "gib": 1024**2,
    "gb": 1024**2,
    "t": 1024**3,
    "tib": 1024**3,
    "tb": 1024**3,
}
DECIMAL_MEMORY_UNITS = frozenset({"kb", "mb", "gb", "tb"})

# Bit rates in Mbps (decimal, as network rates always are).
RATE_UNITS_MBPS: dict[str, float] = {
    "bps": 1e-6,
    "kbps": 1e-3,
    "mbps": 1.0,
    "gbps": 1e3,
    "tbps": 1e6,
}

MEMORY_PATTERN = r"^\s*[0-9]+(\.[0-9]+)?\s*([KMGT]i?B?|[kmgt]i?b?)?\s*$"
RATE_PATTERN = r"^\s*[0-9]+(\.[0-9]+)?\s*([KMGTkmgt]?bps|[KMGTkmgt]?BPS)\s*$"


class QuantityError(ValueError):
    """A quantity string that cannot be read; the message says what is accepted."""


def _split(value: str) -> tuple[float, str]:
    match = _QUANTITY.match(value)
    if match is None:
        raise QuantityError(f"{value!r} is not a number followed by a unit")
    return float(match["num"]), match["unit"].lower()


def _number_and_unit(value: Any, default_unit: str, expected: str) -> tuple[float, str]:
    """A bare number (in `default_unit`) or a string with a unit; `expected` names what is wanted."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value), default_unit
    if isinstance(value, str):
        number, unit = _split(value)
        return number, unit or default_unit
    raise QuantityError(f"{expected} must be a number or a string with a unit")


def parse_memory_kib(value: Any, default_unit: str) -> int:
    """Convert a memory quantity to KiB; a bare number is taken in `default_unit`."""
    number, unit = _number_and_unit(value, default_unit, "a memory size (e.g. '4GiB')")
    if unit not in MEMORY_UNITS_KIB:
        raise QuantityError(f"unknown memory unit {unit!r}: use KiB, MiB, GiB or TiB")
    kib = number * MEMORY_UNITS_KIB[unit]
    if not math.isfinite(kib) or kib != int(kib):
        raise QuantityError(f"{value!r} is not a whole number of KiB")
    if kib < 0:
        raise QuantityError("a memory size cannot be negative")
    return int(kib)


def parse_rate_mbps(value: Any, default_unit: str) -> float:
    """Convert a bit rate to Mbps; a bare number is taken in `default_unit`."""
    number, unit = _number_and_unit(value, default_unit, "a bit rate (e.g. '10Gbps')")
    if unit not in RATE_UNITS_MBPS:
        raise QuantityError(f"unknown bit-rate unit {unit!r}: use Mbps, Gbps or Tbps")
    mbps = number * RATE_UNITS_MBPS[unit]
    if not math.isfinite(mbps) or mbps < 0:
        raise QuantityError("a bit rate must be a finite, non-negative number")
    return mbps


def uses_decimal_memory_unit(value: Any) -> bool:
    """True when a memory quantity string spells a decimal unit (`GB`) that is read as binary."""
    if not isinstance(value, str):
        return False
    try:
        _, unit = _split(value)
    except QuantityError:
        return False
    return unit in DECIMAL_MEMORY_UNITS


def format_memory_kib(kib: int) -> str:
    """Canonical spelling of a memory size: the largest binary unit that divides it exactly."""
    for unit, factor in (("TiB", 1024**3), ("GiB", 1024**2), ("MiB", 1024), ("KiB", 1)):
        if kib and kib % factor == 0:
            return f"{kib // factor}{unit}"
    return f"{kib}KiB"


def _mib(value: Any) -> int:
    if type(value) is int and value >= 0:  # the common case, checked first: stored hosts
        return value
    kib = parse_memory_kib(value, "mib")
    if kib % 1024:
        raise QuantityError(f"{value!r} is not a whole number of MiB")
    return kib // 1024


def _kib(value: Any) -> int:
    if type(value) is int and value >= 0:
        return value
    return parse_memory_kib(value, "kib")


def _gib(value: Any) -> float:
    return parse_memory_kib(value, "gib") / 1024**2


def _gbps(value: Any) -> float:
    return parse_rate_mbps(value, "gbps") / 1e3


def stored_gbps(value: float) -> float:
    """What a `Gbps` field stores of `value` (Gbps): a sum a claim writes, as validated."""
    return _gbps(value)


def _mbps(value: Any) -> float:
    return parse_rate_mbps(value, "mbps")


MAX_MIB = 2**40  # 1 EiB: beyond any host, far from the 64-bit limit of the store and the arrays
MAX_KIB = MAX_MIB * 1024
MAX_GIB = float(MAX_MIB // 1024)
MAX_GBPS = 10_000_000.0  # 10 Pbit/s


def _memory_schema(unit: str, maximum: float) -> dict[str, Any]:
    return {
        "anyOf": [
            {"type": "integer", "minimum": 0, "maximum": maximum},
            {"type": "string", "pattern": MEMORY_PATTERN},
        ],
        "description": f"Memory size: a number in {unit}, or a string with a unit such as '4GiB'",
    }


def _rate_schema(unit: str, maximum: float) -> dict[str, Any]:
    return {
        "anyOf": [
            {"type": "number", "minimum": 0, "maximum": maximum},
            {"type": "string", "pattern": RATE_PATTERN},
        ],
        "description": f"Bit rate: a number in {unit}, or a string with a unit such as '10Gbps'",
    }


MiB = Annotated[
    int,
    BeforeValidator(_mib),
    Field(ge=0, le=MAX_MIB),
    WithJsonSchema(_memory_schema("MiB", MAX_MIB)),
]
"""Memory in MiB; accepts `4096` or `"4GiB"`."""

KiB = Annotated[
    int,
    BeforeValidator(_kib),
    Field(ge=0, le=MAX_KIB),
    WithJsonSchema(_memory_schema("KiB", MAX_KIB)),
]
"""Memory in KiB; accepts `2048` or `"2MiB"`."""

GiB = Annotated[
    float,
    BeforeValidator(_gib),
    Field(ge=0, le=MAX_GIB, allow_inf_nan=False),
    WithJsonSchema(_memory_schema("GiB", MAX_GIB)),
]
"""Storage or memory in GiB; accepts `40` or `"40GiB"`."""

Gbps = Annotated[
    float,
    BeforeValidator(_gbps),
    Field(ge=0, le=MAX_GBPS, allow_inf_nan=False),
    WithJsonSchema(_rate_schema("Gbps", MAX_GBPS)),
]
"""Bit rate in Gbps; accepts `10` or `"10Gbps"` or `"500 Mbps"`."""

Mbps = Annotated[
    float,
    BeforeValidator(_mbps),
    Field(ge=0, le=MAX_GBPS * 1000, allow_inf_nan=False),
    WithJsonSchema(_rate_schema("Mbps", MAX_GBPS * 1000)),
]
"""Bit rate in Mbps; accepts `100` or `"100 Mbps"`."""


def _page_size(value: Any) -> int:
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise QuantityError("give the page size with a unit, e.g. '1GiB' or '2MiB'")
    kib = parse_memory_kib(value, "kib")
    if kib <= 0:
        raise QuantityError("a page size must be positive")
    return kib


PageSize = Annotated[
    int,
    BeforeValidator(_page_size),
    PlainSerializer(format_memory_kib, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": MEMORY_PATTERN,
            "description": "Page size with a unit, e.g. '1GiB' or '2MiB'",
            "examples": ["1GiB", "2MiB"],
        }
    ),
]
"""A page size held in KiB and written with a unit (`1GiB`)."""

GIB_PAGE_KIB = 1024 * 1024
MIB2_PAGE_KIB = 2048
