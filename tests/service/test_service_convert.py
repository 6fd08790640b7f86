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


def _openvim_host(sqlite_client: TestClient) -> None:
    import nfvplace

    host = nfvplace.convert(DATA / "openvim" / "host-example1.yaml").data
    assert sqlite_client.put(f"/v1/hosts/{host['id']}", json=host).status_code < 300


def test_placement_envelope_takes_a_dialect(sqlite_client: TestClient) -> None:
    import yaml

    _openvim_host(sqlite_client)
    flavor = yaml.safe_load((DATA / "openvim" / "5PTh_8G_2I.yaml").read_text())
    answer = sqlite_client.post(
        "/v1/placements", json={"vm": flavor, "dialect": "openvim", "dry_run": True}
    )
    assert answer.status_code == 200, answer.text
    (config,) = answer.json()["configurations"]
    assert config["host"] == "fake-host-1"


def test_placement_dialect_must_match_the_document(sqlite_client: TestClient) -> None:
    flavor = {"name": "f", "vcpus": 1, "ram": 512, "extra_specs": {}}
    wrong = sqlite_client.post("/v1/placements", json={"vm": flavor, "dialect": "osm-sol006"})
    assert wrong.status_code == 422
    assert "reads as openstack-flavor" in wrong.text
    unknown = sqlite_client.post("/v1/placements", json={"vm": flavor, "dialect": "klingon"})
    assert unknown.status_code == 422
