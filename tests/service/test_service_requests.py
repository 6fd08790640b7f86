"""The envelope of `POST /v1/placements` (service/requests.py `PlacementEnvelope`): each refusal
keeps its stable code and its message, whatever reads the body."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from service_hosts import vm

from nfvplace.models.loading import SourceDocument
from nfvplace.service.problems import ProblemError
from nfvplace.service.routers.placements import placement_request

INVALID_REQUEST = "nfvplace.service.invalid_request"
INPUT_INVALID = "nfvplace.input.invalid"
ONE_OF = 'give exactly one of "vm" (a VM Descriptor), "vnf" (a VNF template) or "batch"'
ENTRY = 'must be {"vm": VM Descriptor, "count": k}'

CASES: list[tuple[str, Any, str, str]] = [
    ("a list", [1, 2], INVALID_REQUEST, "the body must be a JSON object"),
    ("nothing to place", {}, INVALID_REQUEST, ONE_OF),
    ("two targets", {"vm": vm(), "vnf": {}}, INVALID_REQUEST, ONE_OF),
    (
        "a member unknown",
        {"vm": vm(), "colour": 1},
        INVALID_REQUEST,
        "unknown member(s) ['colour']",
    ),
    ("an option's type", {"vm": vm(), "dry_run": "yes"}, INPUT_INVALID, "invalid request"),
    ("a policy's name", {"vm": vm(), "policy": "a b"}, INPUT_INVALID, "invalid request"),
    (
        "a batch in a dialect",
        {"batch": [{"vm": vm()}], "dialect": "tosca"},
        INVALID_REQUEST,
        '"dialect" applies to "vm" or "vnf"',
    ),
    ("moves without a dry run", {"vm": vm(), "moves": True}, INVALID_REQUEST, '"moves": true'),
    ("an empty batch", {"batch": []}, INVALID_REQUEST, '"batch" must be a non-empty list'),
    ("a batch not a list", {"batch": {}}, INVALID_REQUEST, '"batch" must be a non-empty list'),
    ("an entry without vm", {"batch": [{"count": 1}]}, INVALID_REQUEST, f"batch[0] {ENTRY}"),
    ("an entry's member", {"batch": [{"vm": vm(), "n": 1}]}, INVALID_REQUEST, f"batch[0] {ENTRY}"),
    (
        "a count of zero",
        {"batch": [{"vm": vm()}, {"vm": vm(), "count": 0}]},
        INVALID_REQUEST,
        "batch[1].count must be an integer from 1 to 10000",
    ),
    (
        "a count that is true",
        {"batch": [{"vm": vm(), "count": True}]},
        INVALID_REQUEST,
        "batch[0].count must be an integer from 1 to 10000",
    ),
    ("a vm that is null", {"vm": None}, INPUT_INVALID, "VM Descriptor must be a JSON object"),
]


@pytest.mark.parametrize(
    ("body", "code", "detail"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_refused_envelope_keeps_its_code_and_message(body: Any, code: str, detail: str) -> None:
    with pytest.raises(ProblemError) as refused:
        placement_request(SourceDocument(data=body, source="body"))
    assert (refused.value.status, refused.value.code) == (422, code)
    assert detail in refused.value.detail


def test_an_options_finding_points_at_the_member() -> None:
    with pytest.raises(ProblemError) as refused:
        placement_request(SourceDocument(data={"vm": vm(), "explain": 1}, source="body"))
    (finding,) = refused.value.extra["findings"]
    assert finding["pointer"] == "/explain"


def test_the_envelope_is_refused_over_http_as_a_problem(client: TestClient) -> None:
    answer = client.post("/v1/placements", json={"vm": vm(), "colour": 1})
    assert answer.status_code == 422
    assert answer.json()["code"] == INVALID_REQUEST
    assert answer.json()["detail"].startswith("unknown member(s) ['colour']; use ['batch', ")


def test_an_accepted_envelope_carries_its_options() -> None:
    body = {"vm": vm(), "dry_run": True, "policy": "spread", "explain": True, "moves": True}
    request = placement_request(SourceDocument(data=body, source="body"))
    assert (request.dry_run, request.policy, request.explain, request.moves) == (
        True,
        "spread",
        True,
        True,
    )
    assert request.body is body
