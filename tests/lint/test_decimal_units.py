"""The quick check for decimal memory units agrees with the walk that builds NFV002's hits."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nfvplace.lint.schema import _decimal_unit_hits, decimal_unit_hits, spells_decimal_unit

KEYS = st.sampled_from(
    ["memory_mib", "size", "ram", "total", "memory", "hugepages", "name", "cpu_sets", "x_gib"]
)
SCALARS = st.one_of(
    st.sampled_from(["10GB", "4GiB", " 2 MB ", "1gb", "3kB", "512", "GB", "1.5TB", ""]),
    st.integers(-3, 3),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
)
KEY_ANY = st.one_of(KEYS, st.integers(0, 3), st.booleans(), st.tuples(st.integers(0, 1)))
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(KEY_ANY, inner, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(DOCUMENTS)
def test_the_check_says_whether_the_walk_finds_a_hit(data: Any) -> None:
    walked = list(_decimal_unit_hits(data, ()))
    assert spells_decimal_unit(data) is bool(walked)
    assert [(h.path, h.message) for h in decimal_unit_hits(data)] == [
        (h.path, h.message) for h in walked
    ]


@pytest.mark.parametrize(
    ("data", "found"),
    [
        ({"memory_mib": "10GB"}, True),
        ({"memory_mib": "10GiB"}, False),
        ({"cpu_sets": [{"hugepages": {"size": "1GB"}}]}, True),
        ({"memory": {"size": "2MB"}}, True),  # a memory key whose value is not one: looked into
        ({("tuple",): {"size": "2MB"}}, False),  # a key neither text nor number: passed over
        ({1: {"size": "2MB"}}, True),
        ([[{"ram": "1TB"}]], True),
        ({"name": "10GB"}, False),
        ("10GB", False),
    ],
)
def test_where_a_decimal_unit_is_found(data: Any, found: bool) -> None:
    assert spells_decimal_unit(data) is found
    assert bool(list(decimal_unit_hits(data))) is found
