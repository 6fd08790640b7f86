"""The plug-in's CHD text (`nfvplace.integrations.nova.canonical`) is `client.digest`'s, byte for
byte: on the CHDs `chd_of` writes, and on any JSON-like value (weird keys, the marker it splices
at inside a string, tuples it remembered and equal tuples it did not, floats, booleans)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.nova_candidates import host
from nfvplace.integrations.nova import canonical
from nfvplace.integrations.nova.client import digest
from nfvplace.integrations.nova.hosts import chd_of, isolate_refused
from nfvplace.integrations.nova.reach import host_wide
from tests.integrations.test_nova_columns import VIEWS

LAYOUT_IDS = (1, 2, 3, 57)
LAYOUT_SIBLINGS = ((1, 57), (2,), (3,), (1, 57))
canonical.remember(LAYOUT_IDS)
canonical.remember(LAYOUT_SIBLINGS)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.just(canonical._MARK),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=6), inner, max_size=4),
    ),
    max_leaves=12,
)
columns = st.one_of(
    st.just(LAYOUT_IDS),  # remembered
    st.just(LAYOUT_SIBLINGS),
    st.just(tuple(LAYOUT_IDS)),  # the same object (a tuple of a tuple is itself)
    st.lists(st.integers(0, 200), max_size=5).map(tuple),  # an equal or other tuple, not kept
    st.lists(st.one_of(st.integers(0, 3), st.booleans()), max_size=5),
    st.lists(st.floats(0, 4), max_size=3).map(tuple),
    values,
)
cpus = st.one_of(
    st.fixed_dictionaries(
        dict.fromkeys(("core", "id", "siblings", "template", "templates"), columns)
    ),
    st.dictionaries(st.sampled_from(["core", "id", "siblings", "template", "x"]), columns),
    values,
)
nodes = st.one_of(
    st.fixed_dictionaries({"cpus": cpus, "id": st.integers(0, 3)}, optional={"memory": values}),
    st.dictionaries(st.one_of(st.text(max_size=5), st.just("cpus")), values, max_size=3),
    values,
)
chds = st.fixed_dictionaries(
    {"id": st.text(max_size=5), "numa_nodes": st.one_of(st.lists(nodes, max_size=3), values)},
    optional={"processor": values, "a": values, "zz": values, "schema": st.just("x")},
)


@settings(max_examples=600, deadline=None)
@given(chd=chds)
def test_the_text_is_the_digest_s_on_any_json_like_chd(chd: dict[str, Any]) -> None:
    assert canonical.canonical(chd) == digest(chd)[1]


def test_a_mark_in_a_value_is_never_spliced_at() -> None:
    chd = {"id": "h", "numa_nodes": [{"cpus": {"id": LAYOUT_IDS}}], "label": canonical._MARK}
    assert canonical.canonical(chd) == digest(chd)[1]
    assert json.loads(canonical.canonical(chd))["label"] == canonical._MARK


def test_only_tuples_of_integers_are_remembered() -> None:
    floats, flags = (1.0, 2.0), (True, False)
    canonical.remember(floats)
    canonical.remember(flags)
    assert id(floats) not in canonical._kept
    assert id(flags) not in canonical._kept
    chd = {"id": "h", "numa_nodes": [{"cpus": dict.fromkeys(canonical._CPU_COLUMNS, flags)}]}
    assert canonical.canonical(chd) == digest(chd)[1]


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
@pytest.mark.parametrize("isolate", [False, True])
def test_every_view_s_chd_is_written_as_the_digest_writes_it(
    view: dict[str, Any], isolate: bool
) -> None:
    closed = isolate_refused(view) if isolate and view["cells"] else None
    chd = chd_of(view, closed, columns=True)
    assert canonical.canonical(chd) == digest(chd)[1]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), wide=st.booleans(), isolate=st.booleans())
def test_bench_hosts_are_written_as_the_digest_writes_them(
    seed: int, wide: bool, isolate: bool
) -> None:
    view = host(random.Random(seed), f"h-{seed}")
    view = host_wide(view) if wide else view
    chd = chd_of(view, isolate_refused(view) if isolate else None, columns=True)
    assert canonical.canonical(chd) == digest(chd)[1]
