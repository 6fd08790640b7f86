"""The REST doors never open a file a VNF template names: a member given as `file:` (inside the
folder or not) is refused as a reference the server cannot read, with the way to send it inline."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

VNF = {
    "schema": "nfvplace/vnf/v1",
    "name": "t",
    "members": [
        {"name": "du", "file": "/etc/hostname"},
        {"name": "cu", "file": "../../../etc/passwd"},
    ],
}


@pytest.mark.parametrize("path", ["/v1/placements", "/v1/placements?dry_run=true"])
def test_a_placement_with_member_files_opens_none(sqlite_client: TestClient, path: str) -> None:
    answer = sqlite_client.post(path, json={"vnf": VNF})
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert problem["code"] == "nfvplace.input.reference"
    assert problem["members"] == ["du", "cu"]
    assert "inline" in problem["detail"]
    assert "root:" not in answer.text


def test_lint_and_convert_open_no_member_file(sqlite_client: TestClient) -> None:
    for path in ("/v1/lint", "/v1/convert"):
        answer = sqlite_client.post(path, json=VNF)
        assert "root:" not in answer.text, answer.text
        assert answer.status_code in (200, 422), answer.text
