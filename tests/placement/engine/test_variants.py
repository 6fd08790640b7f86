"""Variant selection (`engine/variants.py`): each host gets the first variant it matches, through
the kinds' `variant_hosts` hooks."""

from __future__ import annotations

from builders import host, vm

from nfvplace.models.vmd import VariantMatch
from nfvplace.placement import FleetIndex
from nfvplace.placement.engine.variants import matches, split


def test_matches_ands_what_each_kind_says() -> None:
    fleet = FleetIndex([host("intel"), host("amd", vendor="AuthenticAMD")])
    intel = VariantMatch.model_validate({"processor_vendor": "GenuineIntel"})
    assert matches(fleet, intel).tolist() == [True, False]
    nothing_asked = VariantMatch.model_validate({})
    assert matches(fleet, nothing_asked).tolist() == [True, True]


def test_split_gives_each_host_the_first_variant_it_matches() -> None:
    fleet = FleetIndex([host("intel"), host("amd", vendor="AuthenticAMD")])
    descriptor = vm(
        variants=[{"name": "on-amd", "match": {"processor_vendor": "AuthenticAMD"}}],
    )
    parts = [(name, mask.tolist()) for _, name, mask in split(fleet, descriptor)]
    assert parts == [("on-amd", [False, True]), (None, [True, False])]
