"""One enum of rejection reasons: every kind's reasons are its own, and docs/placement.md lists each
with its meaning."""

from __future__ import annotations

import re
from pathlib import Path

from nfvplace.placement.reasons import BY_CODE, Reason, resource_of
from nfvplace.placement.resources import KINDS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "placement.md"
ENGINE = {
    "numa_nodes": "filter",
    "numa_combination": "filter",
    "infeasible": "exact model",
    "timeout": "exact model",
    "internal": "exact model",
    "claim": "exact model",
    "not_tried": "exact model",
    "affinity": "joint placement",
    "link": "joint placement",
}


def _table() -> dict[str, tuple[str, str]]:
    text = DOCS.read_text()
    start = text.index("| reason | checked by | meaning |")
    section = text[start : text.index("\n\n", start)]
    rows = re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \| ([^|]+) \|$", section, re.M)
    return {code: (where.strip(), meaning.strip()) for code, where, meaning in rows}


def test_every_reason_is_owned_by_one_kind_or_the_engine() -> None:
    owners: dict[Reason, str] = {}
    for kind in KINDS:
        for reason in kind.reasons:
            assert reason not in owners, f"{reason} is {owners[reason]}'s and {kind.name}'s"
            owners[reason] = kind.name
    assert set(Reason) == set(owners) | {BY_CODE[c] for c in ENGINE}
    assert not set(owners) & {BY_CODE[c] for c in ENGINE}


def test_the_docs_list_every_reason_with_its_meaning() -> None:
    table = _table()
    assert set(table) == {r.value for r in Reason}
    kind_of = {r: k.name for k in KINDS for r in k.reasons}
    for reason in Reason:
        where, meaning = table[reason.value]
        assert meaning == reason.meaning, reason
        expected = f"`{kind_of[reason]}` kind" if reason in kind_of else ENGINE[reason.value]
        assert where == expected, reason


def test_capacity_names_a_resource_for_every_code() -> None:
    assert resource_of("threads") == "cores"
    assert resource_of("core_pairs") == "sibling pairs"
    assert resource_of("physical_network") == "physical network"
    assert resource_of("something_new") == "something new"
