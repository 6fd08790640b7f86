"""docs/clause8.md against the code: every field it names exists, every module exists, and the items
it marks as information are exactly those lint rule NFV050 reports."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

import nfvplace.models.chd as chd
import nfvplace.models.vmd as vmd
from nfvplace.lint.rules import information

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "clause8.md").read_text(encoding="utf-8")


def _rows(heading: str) -> list[list[str]]:
    part = PAGE.split(heading, 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in part.splitlines() if line.startswith("| 8")]
    return [[cell.strip(" |") for cell in row] for row in rows]


def _field_names(module: object) -> set[str]:
    names: set[str] = set()
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, BaseModel):
            for name, info in value.model_fields.items():
                names.update({name, info.alias or name})
    return names


CHD_ROWS = _rows("## 8.1 Compute Host Descriptor")
VMD_ROWS = _rows("## 8.2 VM Descriptor")


def test_the_page_covers_both_descriptors() -> None:
    assert len(CHD_ROWS) >= 20
    assert len(VMD_ROWS) >= 20
    assert all(len(row) == 5 for row in CHD_ROWS + VMD_ROWS)


def test_every_field_named_exists() -> None:
    for rows, module in ((CHD_ROWS, chd), (VMD_ROWS, vmd)):
        known = _field_names(module)
        for row in rows:
            for token in re.findall(r"`([a-z_\[\]\.]+)`", row[2]):
                for part in token.replace("[]", "").split("."):
                    assert part in known, f"{token} in row {row[1]!r}"


def test_every_module_named_exists() -> None:
    for row in CHD_ROWS + VMD_ROWS:
        modules = [m.strip().strip("`") for m in row[4].split(",")]
        if modules == ["NFV050"]:
            assert row[3].startswith("information"), row
        else:
            for where in modules:
                assert (ROOT / "nfvplace" / where).is_file(), where
            assert not row[3].startswith("information"), row


def test_information_items_are_what_nfv050_reports() -> None:
    said = {
        token.replace("[]", "").split(".")[-1]
        for row in CHD_ROWS + VMD_ROWS
        if row[3].startswith("information")
        for token in re.findall(r"`([a-z_\[\]\.]+)`", row[2])
    }
    reported = {path[-1] for path, _c, _w in (*information.VMD_ITEMS, *information.CHD_ITEMS)}
    reported |= {field for field, _w in information.PORT_ITEMS}
    assert said == reported
