"""The stage plumbing the kinds share (`resources/kind.py`, `resources/stages.py`): which kinds a
stage visits, and the typed handles a kind keeps its decisions, solved values and relaxation
state under."""

from __future__ import annotations

from fractions import Fraction

import pytest
from ortools.sat.python import cp_model

from nfvplace.placement.joint.relaxation import _RelaxModel
from nfvplace.placement.resources import KINDS, implementing
from nfvplace.placement.resources.kind import Decisions, RelaxState
from nfvplace.placement.resources.model import Layout, ModelContext, ReadBack
from nfvplace.placement.resources.shared import SHARED_CPUS, SharedChoice
from nfvplace.placement.resources.stages import STAGES, Decides, Free, HoldsUnits, Variants


@pytest.mark.parametrize(
    ("protocol", "method"),
    [(Free, "free"), (Decides, "decide"), (Variants, "variant_hosts"), (HoldsUnits, "held_units")],
)
def test_a_stage_visits_exactly_the_kinds_that_have_its_methods(
    protocol: type, method: str
) -> None:
    having = [kind.name for kind in KINDS if hasattr(kind, method)]
    assert [kind.name for kind in implementing(protocol)] == having
    assert having  # every stage here has a kind in it


def test_every_kind_is_in_some_stage_and_every_stage_has_a_kind() -> None:
    assert all(implementing(protocol) for protocol in STAGES)
    assert {k.name for k in KINDS} == {k.name for p in STAGES for k in implementing(p)}


def test_decisions_come_back_under_the_kind_that_made_them() -> None:
    decisions = Decisions()
    assert decisions.of(SHARED_CPUS) is None  # nothing decided: the request asks nothing of it
    choice = SharedChoice(node=1, pus=(), room=Fraction(3, 2))
    decisions.put(SHARED_CPUS, choice)
    assert decisions.of(SHARED_CPUS) is choice


def test_solved_values_come_back_under_the_handle_they_were_kept_with() -> None:
    ctx = ModelContext(cp_model.CpModel(), None, None, None)  # type: ignore[arg-type]
    ours: ReadBack[tuple[str, int]] = ReadBack("ours")
    other: ReadBack[tuple[str, int]] = ReadBack("other")
    var = ctx.model.new_int_var(0, 3, "x")
    ctx.keep(ours, ("x", 0), var)
    assert ctx.read_back == {"ours": {("x", 0): var}}
    layout = Layout(host="h", nodes={}, values={"ours": {("x", 0): 2}})
    assert layout.of(ours) == {("x", 0): 2}
    assert layout.of(other) == {}  # a kind that kept nothing reads nothing


def test_relaxation_state_is_made_once_per_handle() -> None:
    made: list[list[int]] = []

    def new() -> list[int]:
        made.append([])
        return made[-1]

    model = _RelaxModel(fleet=None)  # type: ignore[arg-type]
    handle = RelaxState("ours", new)
    first = model.state(handle)
    first.append(1)
    assert model.state(handle) is first
    assert len(made) == 1
    assert model.state(RelaxState("other", list)) == []
