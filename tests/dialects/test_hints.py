"""Fix hints for findings about a vendor's file are in the vendor's own terms."""

from __future__ import annotations

from pathlib import Path

import pytest

from nfvplace.dialects import DIALECT_NAMES
from nfvplace.dialects.hints import VENDOR_HINTS, vendor_hint
from nfvplace.lint import RULES_BY_ID, lint_file

DATA = Path(__file__).resolve().parents[1] / "data" / "dialects"


@pytest.mark.parametrize("name", ["osm-im/ref22_vnfd.yaml", "osm-im/hackfest_epasriov_vnfd.yaml"])
def test_an_osm_interface_without_speed_is_told_its_own_field(name: str) -> None:
    findings = [f for f in lint_file(DATA / name).findings if f.rule == "NFV303"]
    assert findings
    for finding in findings:
        assert finding.hint is not None
        assert "virtual-interface bandwidth" in finding.hint
        assert "speed_gbps" not in finding.hint


def test_every_vendor_hint_is_for_a_dialect_and_a_rule() -> None:
    assert set(VENDOR_HINTS) <= set(DIALECT_NAMES)
    for hints in VENDOR_HINTS.values():
        assert set(hints) <= set(RULES_BY_ID)


def test_a_fix_in_nfvplace_terms_without_a_vendor_hint_says_so() -> None:
    fix = RULES_BY_ID["NFV205"].fix  # drop 'memory_oversubscription' ...
    hint = vendor_hint("osm-sol006", "NFV205", fix)
    assert hint is not None
    assert hint.startswith(fix)
    assert "nfvplace's field names" in hint
    plain = "use 2MiB or 1GiB on x86_64"  # no field names: kept as it is
    assert vendor_hint("osm-sol006", "NFV203", plain) == plain
