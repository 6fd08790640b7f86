"""The filter touches only the columns a request needs, and gives what the full passes gave: the CPU
kind's needs against their definitions over every column, the NICs' speed classes against the
reductions of the whole table, the class-by-class layout of the index's 3-D tables, and the figures
the free resources work out once."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from nfvplace.exact import kbps
from nfvplace.models.vmd import InterfaceMode, ThreadPolicy
from nfvplace.placement.request import CpuSetDemand, InterfaceDemand
from nfvplace.placement.resources.base import by_class
from nfvplace.placement.resources.cpu import CpuTable
from nfvplace.placement.resources.cpu import _needs as cpu_needs
from nfvplace.placement.resources.cpu.pools import CpuNode
from nfvplace.placement.resources.memory import MEMORY
from nfvplace.placement.resources.nics.filter import _Columns
from nfvplace.placement.resources.nics.table import NicsTable
from nfvplace.placement.resources.rows import rows_max, rows_sum
from nfvplace.placement.resources.shared import SharedPu

GRIDS = st.tuples(st.integers(1, 12), st.integers(1, 4))


def _grid(shape: tuple[int, int]) -> Any:
    return hnp.arrays(np.int64, shape, elements=st.integers(0, 40))


@st.composite
def cpu_cases(draw: Any) -> tuple[CpuTable, CpuSetDemand, int]:
    shape = draw(GRIDS)
    whole = draw(_grid(shape))
    table = CpuTable(
        whole=whole,
        whole_threads=whole * draw(st.sampled_from((1, 2, 4))),
        single=draw(_grid(shape)),
        half_busy=draw(_grid(shape)),
        eligible=draw(_grid(shape)),
        smt=np.ones(shape[0], dtype=np.bool_),
        free_threads=np.zeros(shape[0], dtype=np.int64),
        total_threads=np.ones(shape[0], dtype=np.int64),
    )
    pairs, singles = draw(st.integers(0, 5)), draw(st.integers(0, 5))
    demand = CpuSetDemand(
        id=0,
        vcpus=tuple(range(2 * pairs + singles)),
        pairs=tuple((2 * k, 2 * k + 1) for k in range(pairs)),
        singles=tuple(range(2 * pairs, 2 * pairs + singles)),
        policy=draw(st.sampled_from((ThreadPolicy.isolate, ThreadPolicy.prefer))),
        requires_smt=bool(pairs),
        memory_mib=1024,
        hugepage_size_kib=None,
        hugepage_count=0,
        memory_bandwidth_kbps=0,
    )
    return table, demand, draw(st.integers(0, 1))


def _defined(t: CpuTable, cs: CpuSetDemand, emulator: int) -> list[tuple[Any, Any, float]]:
    """The CPU needs as defined over every column (the filter before it read only what it needs)."""
    pairs, singles = len(cs.pairs), len(cs.singles)
    spare = np.maximum(t.whole - pairs, 0)
    threads = np.maximum(t.whole_threads - 2 * pairs, 0) + t.half_busy + t.single
    out = []
    if pairs:
        out.append((t.whole >= pairs, t.whole, pairs))
    if singles and cs.policy is ThreadPolicy.isolate:
        out.append((spare + t.single >= singles, spare + t.single, singles))
    if singles + emulator:
        out.append((threads >= singles + emulator, threads, singles + emulator))
    return out


@settings(max_examples=150, deadline=None)
@given(cpu_cases())
def test_cpu_needs_equal_their_definition_over_every_column(
    case: tuple[CpuTable, CpuSetDemand, int],
) -> None:
    table, demand, emulator = case
    before = {name: getattr(table, name).copy() for name in ("whole", "whole_threads", "single")}
    got = cpu_needs(table, demand, emulator)
    want = _defined(table, demand, emulator)
    assert len(got) == len(want)
    for need, (ok, available, requested) in zip(got, want, strict=True):
        assert np.array_equal(need.ok, ok)
        assert np.array_equal(need.available, available)
        assert need.requested == requested
    for name, column in before.items():  # no need writes into the index's columns
        assert np.array_equal(getattr(table, name), column)


TABLES = hnp.arrays(
    np.int64,
    st.tuples(st.integers(1, 10), st.integers(1, 4), st.integers(1, 4)),
    elements=st.integers(0, 2**40),
)


@settings(max_examples=100, deadline=None)
@given(TABLES, st.booleans(), st.data())
def test_a_speed_class_column_equals_that_class_of_the_whole_reduction(
    table: Any, per_host: bool, data: Any
) -> None:
    hosts, nodes, classes = table.shape
    shape = (hosts, 1 if per_host else nodes)
    col = data.draw(st.one_of(st.none(), st.integers(0, classes - 1)))
    for reduce in (rows_sum, rows_max):
        columns = _Columns(table, shape, per_host, reduce)
        got = columns.of(col)
        if col is None:
            want = np.zeros(shape, dtype=np.int64)
        elif per_host:
            want = reduce(table)[:, None][:, :, col]
        else:
            want = table[:, :, col]
        assert got.shape == shape
        assert np.array_equal(got, want)
        assert columns.of(col) is got  # each column taken once


def test_the_index_lays_speed_and_page_size_tables_out_class_by_class() -> None:
    table = by_class(5, 3, 4)
    assert table.shape == (5, 3, 4)
    assert not table.any()
    nics = NicsTable.empty(6, 2, 3)
    memory = MEMORY.new_table(6, 2, _vocab_with_page_sizes())
    for grid in (table, nics.vfs, nics.ded_ports, nics.vf_bw, memory.hugepages):
        assert all(grid[:, :, k].flags.c_contiguous for k in range(grid.shape[2]))
    nics.vfs[1, 0] = [3, 2, 1]
    copy = nics.copy()
    assert np.array_equal(copy.vfs, nics.vfs)
    assert copy.vfs[:, :, 2].flags.c_contiguous  # a copy (joint searches) keeps the layout
    copy.vfs[1, 0, 0] = 9
    assert nics.vfs[1, 0, 0] == 3


def _vocab_with_page_sizes() -> Any:
    from nfvplace.placement.resources.base import Vocabulary

    return Vocabulary({"page_sizes": {2048, 1048576}})


def test_figures_worked_out_once_equal_their_definition() -> None:
    node = CpuNode(((1, 2), (3, 4), (5, 6, 7, 8)), (9,), (10, 11), 12, True, True)
    assert node.free_threads == 8 + 1 + 2
    assert node.core_sizes == (2, 4)
    iface = InterfaceDemand("e0", InterfaceMode.sriov, 25.0, 2.5, 0, True)
    assert iface.bandwidth_kbps == kbps(2.5) == 2_500_000
    pu = SharedPu(3, Fraction(4), Fraction(1, 2))
    assert pu.spare_vcpus == Fraction(2)
    assert SharedPu(3, Fraction(4), Fraction(5, 4)).spare_vcpus == 0
    assert pu == SharedPu(3, Fraction(4), Fraction(1, 2))
