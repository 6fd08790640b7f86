"""Placement requests kept by shape (service/shapes.py): a body read as a request of a shape read
before, under another VM name, is the request that reading it whole gives, its Idempotency-Key's
hash included; whatever reading it whole refuses is refused the same way; other bodies are read
whole and not kept."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from service_hosts import vm

from bench.hostgen import request_stream
from nfvplace.models.base import Identifier
from nfvplace.models.loading import SourceDocument
from nfvplace.service.body import parse_body
from nfvplace.service.placing import PlacementRequest, canonical_body
from nfvplace.service.problems import ProblemError
from nfvplace.service.routers.placements import placement_request
from nfvplace.service.shapes import _MARK, RequestShapes, _around, _named_vm

# the service mix's first 40 bodies (bench_service_mix.py), of 16 shapes
MIX = [
    {"vm": vm.model_dump(mode="json", by_alias=True, exclude_none=True)}
    for vm in request_stream(40, seed=8)
]


def document(body: Any) -> SourceDocument:
    return parse_body(json.dumps(body).encode(), "application/json")


def renamed(body: dict[str, Any], name: Any) -> dict[str, Any]:
    return {**body, "vm": {**body["vm"], "name": name}}


def outcome(read: Any, body: Any) -> Any:
    """What reading `body` gives: the request's every part a placement uses, or the refusal."""
    try:
        request: PlacementRequest = read(document(body))
    except ProblemError as exc:
        return ("refused", exc.status, exc.code, exc.detail, exc.extra)
    descriptor = request.descriptor
    return (
        descriptor,
        getattr(descriptor, "model_fields_set", None),
        request.body,
        (request.dry_run, request.policy, request.explain, request.moves),
        request.request_hash,
        request.stored_descriptor,
    )


def kept(*primers: Any) -> RequestShapes:
    """Shapes that have read each of `primers` whole."""
    shapes = RequestShapes(placement_request)
    for body in primers:
        shapes.request(document(body))
    return shapes


SHAPED = [
    ("a mix body", MIX[0]),
    ("a small VM", {"vm": vm()}),
    ("a dry run", {"vm": vm(), "dry_run": True}),
    ("moves on a dry run", {"vm": vm(), "dry_run": True, "moves": True}),
    ("a policy and explain", {"policy": "spread", "explain": True, "vm": vm()}),
    ("its own dialect named", {"vm": vm(), "dialect": "nfvplace"}),
    ("the name also an interface's", {"vm": vm("vf0")}),
    ("the name in a label", {"vm": {**vm("lab"), "labels": {"lab": "lab", "x": "lab"}}}),
    ("a name with every sign", {"vm": vm("a.b_c:d@e/f-9")}),
]


@pytest.mark.parametrize(("case", "body"), SHAPED, ids=[case for case, _ in SHAPED])
@pytest.mark.parametrize("name", ["other", "x", "é-not-ascii", "Z" * 253, "a\n", ""])
def test_a_body_of_a_kept_shape_reads_as_when_read_whole(
    case: str, body: dict[str, Any], name: str
) -> None:
    shapes = kept(body)
    assert len(shapes._shapes) == 1, case
    again = renamed(body, name)
    assert outcome(shapes.request, again) == outcome(placement_request, again)


def test_the_mix_reads_as_when_read_whole_and_keeps_one_entry_a_shape() -> None:
    shapes = RequestShapes(placement_request)
    for body in MIX:
        assert outcome(shapes.request, body) == outcome(placement_request, body)
    assert len(shapes._shapes) == len({json.dumps(renamed(body, "")) for body in MIX}) > 10
    shapes = RequestShapes(placement_request)
    whole, again = (shapes.request(document(MIX[0])) for _ in range(2))
    assert whole.canonical is None  # read whole: sorted when its hash is asked
    assert again.canonical == canonical_body(again.body)  # put together from the shape's text
    assert again.request_hash == whole.request_hash


def test_a_kept_shapes_stored_descriptor_is_put_together_not_written_again() -> None:
    """A body of a kept shape carries its stored descriptor put together from the shape's text
    (`stored`), the text the descriptor writes itself; a body read whole writes it when asked."""
    for body in MIX[:20]:
        shapes = kept(body)
        again = shapes.request(document(renamed(body, "vm-x.1")))
        assert again.stored is not None
        assert again.stored == again.descriptor.model_dump_json(by_alias=True, exclude_none=True)
        assert again.stored_descriptor is again.stored
    assert RequestShapes(placement_request).request(document(MIX[0])).stored is None


def test_a_body_that_holds_the_mark_is_hashed_whole() -> None:
    """The name's place is found by a mark no descriptor can hold (a NUL); a body holding it
    anyway (where nothing is validated) is hashed whole, not put together."""
    body = {"vm": {**vm(), "labels": {"m": _MARK}}}
    assert _around(body) is None
    before, after = _around({"vm": vm()}) or ("", "")
    assert before + json.dumps("dp-vm") + after == canonical_body({"vm": vm()})


NOT_KEPT = [
    ("no schema", {"vm": {k: v for k, v in vm().items() if k != "schema"}}),
    ("a name not a string", {"vm": vm(7)}),  # type: ignore[arg-type]
    ("a batch", {"batch": [{"vm": vm()}]}),
    ("a VNF", {"vnf": {"schema": "nfvplace/vnf/v1", "name": "v", "members": []}}),
    ("a list", [vm()]),
    ("refused by the gate", {"vm": {**vm(), "cpu_sets": []}}),
    ("refused by the envelope", {"vm": vm(), "colour": 1}),
    ("a lone surrogate", {"vm": {**vm(), "labels": {"a": "\ud800"}}}),
]


@pytest.mark.parametrize(("case", "body"), NOT_KEPT, ids=[case for case, _ in NOT_KEPT])
def test_other_bodies_are_read_whole_and_not_kept(case: str, body: Any) -> None:
    shapes = RequestShapes(placement_request)
    for _ in range(2):
        assert outcome(shapes.request, body) == outcome(placement_request, body), case
    assert shapes._shapes == {}


def test_the_oldest_shape_goes_first() -> None:
    shapes = RequestShapes(placement_request, size=2)
    first, second, third = ({"vm": vm(vcpus=v)} for v in (2, 4, 6))
    for body in (first, second, third):
        shapes.request(document(body))
    keys = [_named_vm(body) for body in (second, third)]
    assert list(shapes._shapes) == [key[1] for key in keys if key is not None]


NAMES = st.one_of(
    st.text(alphabet="ab9._:@/-", max_size=8),
    st.text(max_size=4),
    st.sampled_from(["", "-x", ".x", "x" * 254, "x" * 253, "a\n", "\n", "ä"]),
)


@settings(max_examples=200, deadline=None)
@given(body=st.sampled_from([body for _, body in SHAPED] + MIX[:5]), name=NAMES)
def test_any_name_reads_as_when_read_whole(body: dict[str, Any], name: str) -> None:
    again = renamed(body, name)
    assert outcome(kept(body).request, again) == outcome(placement_request, again)


@settings(max_examples=300, deadline=None)
@given(name=NAMES)
def test_the_names_taken_are_the_models(name: str) -> None:
    from nfvplace.service.shapes import _IDENTIFIER

    try:
        TypeAdapter(Identifier).validate_python(name)
        valid = True
    except ValidationError:
        valid = False
    assert valid == bool(_IDENTIFIER.fullmatch(name))


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


def same(a: Any, b: Any) -> bool:
    """Equal JSON values: NaN equal to NaN, -0.0 not to 0.0, a float never to an int or a bool."""
    if isinstance(a, float) and isinstance(b, float):
        both_nan = math.isnan(a) and math.isnan(b)
        return both_nan or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@settings(max_examples=400, deadline=None)
@given(a=JSON, b=JSON)
def test_a_shape_s_key_names_one_body(a: Any, b: Any) -> None:
    """Two bodies share a key only when they are the same but for the VM's name."""
    keys = [_named_vm({"vm": {"schema": "nfvplace/vmd/v1", "name": "n", "x": v}}) for v in (a, b)]
    assert keys[0] is not None
    assert keys[1] is not None
    assert (keys[0][1] == keys[1][1]) == same(a, b)
