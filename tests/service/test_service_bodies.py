"""What users send: JSON with no Content-Type or curl's default form type, YAML with none, SOL006
XML as the body or as a string inside "vm"/"vnf"; a VNFD sent as "vm" is told to come as "vnf";
a dry run's instances are named after no placement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[2]
SOL006 = ROOT / "tests" / "data" / "dialects" / "sol006"
VM = yaml.safe_load((ROOT / "examples" / "vms" / "cloud-vm.yaml").read_text())
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def fleet(sqlite_client: TestClient) -> TestClient:
    for path in sorted((ROOT / "examples" / "hosts").glob("*.yaml")):
        host = yaml.safe_load(path.read_text())
        answer = sqlite_client.put(f"/v1/hosts/{host['id']}", json=host)
        assert answer.status_code in (200, 201), answer.text
    return sqlite_client


@pytest.mark.parametrize(
    ("media", "body"),
    [
        (None, json.dumps({"vm": VM, "dry_run": True})),
        (FORM, json.dumps({"vm": VM, "dry_run": True})),
        ("text/plain", json.dumps({"vm": VM, "dry_run": True})),
        (None, yaml.safe_dump({"vm": VM, "dry_run": True})),
        (FORM, yaml.safe_dump({"vm": VM, "dry_run": True})),
    ],
)
def test_a_body_without_its_type_is_read_as_it_looks(
    fleet: TestClient, media: str | None, body: str
) -> None:
    headers = {"Content-Type": media} if media else {}
    answer = fleet.post("/v1/placements", content=body.encode(), headers=headers)
    if media is None:  # TestClient sends none: check it really was absent
        assert "content-type" not in {k.lower() for k in answer.request.headers}
    assert answer.status_code == 200, answer.text
    assert answer.json()["dry_run"] is True


def test_a_type_that_is_no_syntax_is_still_refused(fleet: TestClient) -> None:
    answer = fleet.post(
        "/v1/placements", content=b"{}", headers={"Content-Type": "multipart/form-data"}
    )
    assert answer.status_code == 415
    assert "application/xml" in answer.json()["detail"]


@pytest.mark.parametrize("media", ["application/xml", "text/xml", None, FORM])
def test_sol006_xml_is_converted(fleet: TestClient, media: str | None) -> None:
    body = (SOL006 / "nfv-vnfd.xml").read_bytes()
    headers = {"Content-Type": media} if media else {}
    answer = fleet.post("/v1/convert", content=body, headers=headers)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["document"]["schema"] == "nfvplace/vmd/v1"
    assert all(f["path"].startswith("/") for f in result["findings"])  # XPath paths


def test_sol006_xml_is_placed_as_the_body_and_inside_vm_or_vnf(fleet: TestClient) -> None:
    text = (SOL006 / "nfv-vnfd.xml").read_text()
    placed = fleet.post(
        "/v1/placements", content=text.encode(), headers={"Content-Type": "application/xml"}
    )
    assert placed.status_code == 201, placed.text
    assert placed.json()["id"].startswith("pl-")
    dry = fleet.post("/v1/placements", json={"vm": text, "dry_run": True})
    assert dry.status_code == 200, dry.text
    template = (SOL006 / "complex-vnfd.xml").read_text()
    dry = fleet.post("/v1/placements", json={"vnf": template, "dry_run": True})
    assert dry.status_code in (200, 409), dry.text
    assert dry.json().get("code") != "nfvplace.input.unknown_kind"


def test_a_vnfd_sent_as_vm_is_told_to_come_as_vnf(fleet: TestClient) -> None:
    template = (SOL006 / "complex-vnfd.xml").read_text()
    answer = fleet.post("/v1/placements", json={"vm": template, "dry_run": True})
    assert answer.status_code == 422, answer.text
    assert 'send it as "vnf"' in answer.json()["detail"]


def test_a_dry_run_names_no_placement(fleet: TestClient) -> None:
    answer = fleet.post("/v1/placements", json={"vm": VM, "dry_run": True})
    assert answer.status_code == 200, answer.text
    for config in answer.json()["configurations"]:
        owner = config.get("owner") or config.get("instance") or ""
        assert not owner.startswith("pl-"), config
        assert owner.startswith("dry-run/"), config
