"""The bounds of a document the json module read (`source.check_json_shape`, which every JSON
road in takes: files, request bodies, the evaluations' VM): a document within both passes at once
(`json_bounds.within_json_bounds`, counted a level at a time), and every other is refused exactly
as the walk node by node refuses it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nfvplace.errors import DescriptorError
from nfvplace.models import source
from nfvplace.models.json_bounds import within_json_bounds

NODES, DEPTH = 40, 6  # small bounds, so that random documents meet them


def walked(data: Any) -> str | None:
    """The refusal of the node-by-node walk (the code before the level count), else None."""
    stack = [(data, 1)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if nodes > NODES:
            return "too_large"
        if depth > DEPTH:
            return "unsafe"
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
            nodes += len(item)
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return None


def refusal(data: Any) -> str | None:
    """What `check_json_shape` says: within the bounds (None), or its refusal."""
    try:
        source.check_json_shape(data, "body")
    except DescriptorError as exc:
        return exc.code.rsplit(".", 1)[-1]
    return None


SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3)
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=3), inner, max_size=5)
    ),
    max_leaves=60,
)


@settings(max_examples=400, deadline=None)
@given(DOCUMENTS)
def test_the_level_count_refuses_as_the_walk_does(data: Any) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source, "MAX_NODES", NODES)
        patch.setattr(source, "MAX_DEPTH", DEPTH)
        assert refusal(data) == walked(data)
        # the json module's types: the level count alone answers as the walk does
        assert within_json_bounds(data, NODES, DEPTH) is (walked(data) is None)


class Mapping(dict):  # type: ignore[type-arg]
    """Not what the json module makes: walked node by node."""


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"a": [1, 2, {"b": None}]}, None),
        ([[[[[[["deep"]]]]]]], "unsafe"),
        (list(range(NODES)), "too_large"),
        ([Mapping({"k": [[[[[["deep"]]]]]]})], "unsafe"),
        ({"k": Mapping({str(n): n for n in range(NODES)})}, "too_large"),
    ],
)
def test_bounds_at_their_edges(data: Any, expected: str | None) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source, "MAX_NODES", NODES)
        patch.setattr(source, "MAX_DEPTH", DEPTH)
        assert refusal(data) == walked(data) == expected
