"""Placement options: validation with the stable error code."""

from __future__ import annotations

import pytest

from nfvplace import errors
from nfvplace.errors import NfvplaceError
from nfvplace.placement.options import Options, Policy, ProcessorMatch, parse_options


def test_defaults() -> None:
    options = parse_options()
    assert options.policy is Policy.pack
    assert options.processor_match is ProcessorMatch.family
    assert options.max_candidates is None
    assert parse_options(policy="least-fragmentation").policy is Policy.least_fragmentation


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"policy": "best"}, "policy"),
        ({"processor_match": "close"}, "processor_match"),
        ({"seed": "x"}, "seed"),
        ({"seed": True}, "seed"),
        ({"max_candidates": 0}, "max_candidates"),
        ({"min_frequency_ratio": 1.5}, "min_frequency_ratio"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_invalid_options(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(NfvplaceError) as info:
        parse_options(**kwargs)
    assert info.value.code == errors.PLACEMENT_INVALID_POLICY
    assert info.value.issues[0].path == field
    assert info.value.issues[0].hint


@pytest.mark.parametrize(
    "kwargs",
    [
        {"policy": "pack"},
        {"processor_match": "family"},
        {"seed": 0},
        {"policy": Policy.pack, "processor_match": ProcessorMatch.family, "seed": 0},
    ],
)
def test_no_keyword_gives_what_the_defaults_spelled_out_give(kwargs: dict[str, object]) -> None:
    """`parse_options()` is one frozen value (a placement loop's every call), equal field by field
    to the options the validation gives for the defaults spelled out."""
    assert parse_options() is parse_options()
    spelled = parse_options(**kwargs)
    assert parse_options() == spelled
    assert [type(getattr(parse_options(), f)) for f in Options.__dataclass_fields__] == [
        type(getattr(spelled, f)) for f in Options.__dataclass_fields__
    ]
