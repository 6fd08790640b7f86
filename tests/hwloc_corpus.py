"""Where the tests find the hwloc XML corpus of real machines.

The corpus (hwloc's BSD-3-Clause test topologies, see `data/hwloc-xml/COPYING.hwloc` and its README)
ships with the tests, so a fresh clone is enough; `NFVPLACE_HWLOC_CORPUS` points at another copy.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CORPUS = Path(
    os.environ.get("NFVPLACE_HWLOC_CORPUS")
    or Path(__file__).resolve().parent / "data" / "hwloc-xml"
)


def corpus_file(name: str) -> Path:
    """A file of the corpus; a missing corpus fails the test loudly (never a skip)."""
    path = CORPUS / name
    if not path.is_file():
        pytest.fail(
            f"hwloc XML corpus file {path} not found (set NFVPLACE_HWLOC_CORPUS)", pytrace=False
        )
    return path
