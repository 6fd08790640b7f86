"""Exact arithmetic for capacity comparisons.

Descriptors carry bandwidths and ratios as decimal numbers (`0.1` Gbps, `usage_ratio: 0.833333333`).
Compared as binary floats, an exact fit can fail (`0.3 - 0.2 < 0.1`) and repeated claims drift. Every
capacity the engine compares is therefore an integer in the smallest unit (kbit/s for bandwidth; MiB
and pages already are) or a `Fraction` (shared-CPU ratios and usage), never a float.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

KBPS_PER_GBPS = 1_000_000
KBPS_PER_MBPS = 1_000
DENOMINATOR = 1_000_000  # shared-CPU ratios are read as the nearest fraction with this denominator


def kbps(gbps: float | None) -> int:
    """Gbps as an integer number of kbit/s (`0.1` -> 100000), exact for up to 6 decimals."""
    return round((gbps or 0.0) * KBPS_PER_GBPS)


def kbps_of_mbps(mbps: float | None) -> int:
    return round((mbps or 0.0) * KBPS_PER_MBPS)


@lru_cache(maxsize=4096)  # a fleet has few distinct ratios; each host view reads every shared PU's
def rational(value: float | None) -> Fraction:
    """A stored ratio as the fraction it stands for (`0.833333333` -> 5/6)."""
    return Fraction(value or 0.0).limit_denominator(DENOMINATOR)


def gbps_text(kbit: int) -> str:
    """kbit/s back to a Gbps figure for messages (`100000` -> `0.1`)."""
    return f"{kbit / KBPS_PER_GBPS:g}"
