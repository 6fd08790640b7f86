"""`POST /v1/convert`: a dialect document in, the converted document and the findings out."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

DATA = Path(__file__).resolve().parents[1] / "data" / "dialects"


def test_yaml_dialect_body_is_converted_with_findings(sqlite_client: TestClient) -> None:
    body = (DATA / "osm-im" / "ref22_vnfd.yaml").read_bytes()
    answer = sqlite_client.post(
        "/v1/convert", content=body, headers={"Content-Type": "application/yaml"}
    )
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["dialect"] == "osm-sol006"
    assert result["document"]["schema"] == "nfvplace/vmd/v1"
    assert {f["kind"] for f in result["findings"]} == {"assumed"}
    assert result["ok"]


def test_to_nova_and_strict(sqlite_client: TestClient) -> None:
    vm = {
        "schema": "nfvplace/vmd/v1",
        "name": "v",
        "cpu_sets": [{"id": 0, "vcpus": [0, 1], "memory_mib": 1024}],
        "interfaces": [{"name": "e0", "mode": "vswitch"}],
    }
    answer = sqlite_client.post("/v1/convert?to=nova&strict=true", json=vm)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["document"]["flavor"]["extra_specs"]["hw:cpu_policy"] == "dedicated"
    assert result["findings"][0]["path"] == "/interfaces"
    assert result["ok"] is False


def test_vocabulary_error_is_a_422_naming_the_field(sqlite_client: TestClient) -> None:
    flavor = {"name": "f", "vcpus": 2, "ram": 1024, "extra_specs": {"hw:cpu_policy": "dedicatedd"}}
    answer = sqlite_client.post("/v1/convert", json=flavor)
    assert answer.status_code == 422
    assert "dedicatedd" in answer.text
