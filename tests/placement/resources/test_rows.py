"""Per-host reductions over node slots: exactly numpy's reductions along axis 1."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from nfvplace.placement.resources.rows import rows_all, rows_any, rows_max, rows_min, rows_sum

SHAPES = hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=6)
INTS = hnp.arrays(np.int64, SHAPES, elements=st.integers(-(2**40), 2**40))
BOOLS = hnp.arrays(np.bool_, SHAPES)

CASES: list[tuple[Callable[[Any], Any], Callable[[Any], Any], Any]] = [
    (rows_any, lambda a: a.any(axis=1), BOOLS),
    (rows_all, lambda a: a.all(axis=1), BOOLS),
    (rows_sum, lambda a: a.sum(axis=1), BOOLS),
    (rows_sum, lambda a: a.sum(axis=1), INTS),
    (rows_max, lambda a: a.max(axis=1), INTS),
    (rows_min, lambda a: a.min(axis=1), INTS),
]


@pytest.mark.parametrize(("ours", "numpy", "arrays"), CASES)
def test_same_values_and_dtype_as_numpy(ours: Any, numpy: Any, arrays: Any) -> None:
    @settings(max_examples=40, deadline=None)
    @given(arrays)
    def check(table: Any) -> None:
        got, want = ours(table), numpy(table)
        assert got.dtype == want.dtype
        assert np.array_equal(got, want)

    check()


def test_no_slot_at_all() -> None:
    empty = np.zeros((3, 0), dtype=np.bool_)
    assert rows_any(empty).tolist() == [False] * 3
    assert rows_all(empty).tolist() == [True] * 3
    assert rows_sum(empty).tolist() == [0] * 3
    for ours, numpy in ((rows_max, np.max), (rows_min, np.min)):
        with pytest.raises(ValueError, match="zero-size array"):
            numpy(empty.astype(np.int64), axis=1)
        with pytest.raises(ValueError, match="zero-size array"):
            ours(empty.astype(np.int64))


def test_a_column_of_the_input_is_never_written() -> None:
    table = np.array([[True, False], [False, False]])
    rows_any(table)
    rows_all(table)
    assert table.tolist() == [[True, False], [False, False]]


LAYOUTS: list[Callable[[Any], Any]] = [
    lambda a: a,
    np.asfortranarray,  # a table laid out slot by slot (`resources.base.by_class`)
    lambda a: a[::2],  # every other host: rows not contiguous
    lambda a: a[:, ::-1],  # slots reversed: a negative stride
    lambda a: np.concatenate([a, a], axis=1),  # 2, 4, 8 slots read as one integer
]


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
@pytest.mark.parametrize(("ours", "numpy"), [(rows_any, np.any), (rows_all, np.all)])
def test_boolean_tables_in_any_layout(layout: int, ours: Any, numpy: Any) -> None:
    @settings(max_examples=40, deadline=None)
    @given(hnp.arrays(np.bool_, hnp.array_shapes(min_dims=2, max_dims=2, max_side=8)))
    def check(table: Any) -> None:
        view = LAYOUTS[layout](table)
        got = ours(view)
        assert got.dtype == np.bool_
        assert np.array_equal(got, numpy(view, axis=1))

    check()
