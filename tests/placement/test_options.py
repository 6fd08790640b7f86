"""Placement options: validation with the stable error code."""

from __future__ import annotations

import pytest

from nfvplace import errors
from nfvplace.errors import NfvplaceError
from nfvplace.placement.options import Policy, ProcessorMatch, parse_options


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
