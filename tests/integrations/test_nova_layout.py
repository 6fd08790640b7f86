"""A host's PU layout (`nfvplace.integrations.nova.layout`): worked out once per topology, and the
CHD written from a kept layout is the one written from a new one."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.nova_candidates import host
from nfvplace.integrations.nova import layout
from nfvplace.integrations.nova.client import digest
from nfvplace.integrations.nova.hosts import chd_of, isolate_refused
from tests.integrations.test_nova_columns import VIEWS


@settings(max_examples=30, deadline=None)
@given(seeds=st.lists(st.integers(0, 10_000), min_size=2, max_size=6), isolate=st.booleans())
def test_a_kept_layout_writes_the_chd_a_new_one_writes(seeds: list[int], isolate: bool) -> None:
    views = [host(random.Random(seed), f"h-{seed}") for seed in seeds]
    closed = [isolate_refused(v) if isolate else None for v in views]
    kept = [digest(chd_of(v, c, columns=True)) for v, c in zip(views, closed, strict=True)]
    anew = []
    for view, shut in zip(views, closed, strict=True):
        layout._kept.clear()
        anew.append(digest(chd_of(view, shut, columns=True)))
    assert kept == anew


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
def test_every_view_is_written_the_same_from_a_kept_layout(view: dict[str, Any]) -> None:
    layout._kept.clear()
    first = chd_of(view)
    assert chd_of(view) == first


def test_a_topology_is_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    core_ids = layout._core_ids
    monkeypatch.setattr(layout, "_kept", {})
    monkeypatch.setattr(layout, "_core_ids", lambda cells: calls.append(1) or core_ids(cells))
    view = host(random.Random(7), "h-7")
    for k in range(20):  # the same hardware, other pinned CPUs
        cells = [{**c, "pinned_cpus": c["pinned_cpus"][:k]} for c in view["cells"]]
        chd_of({**view, "host": f"h-{k}", "cells": cells}, columns=True)
    assert len(calls) == 1
    other = {
        **view,
        "cells": [{**c, "siblings": [[pu] for pu in c["cpuset"]]} for c in view["cells"]],
    }
    chd_of(other, columns=True)
    assert len(calls) == 2


def test_the_layouts_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout, "KEPT_LAYOUTS", 3)
    monkeypatch.setattr(layout, "_kept", {})
    for seed in range(10):
        view = host(random.Random(seed), f"b-{seed}")
        cells = [{**c, "siblings": [*c["siblings"], [1000 + seed]]} for c in view["cells"]]
        chd_of({**view, "cells": cells}, columns=True)
        assert len(layout._kept) <= 3
