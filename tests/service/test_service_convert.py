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


def test_every_descriptor_route_detects_the_dialect_as_the_cli_does(
    sqlite_client: TestClient,
) -> None:
    import yaml

    host = yaml.safe_load((DATA / "openvim" / "host-example1.yaml").read_text())
    put = sqlite_client.put("/v1/hosts/fake-host-1", json=host)  # an OpenVIM host, as it is
    assert put.status_code == 201, put.text
    assert put.json()["chd"]["schema"] == "nfvplace/chd/v1"
    flavor = yaml.safe_load((DATA / "openvim" / "5PTh_8G_2I.yaml").read_text())
    for route, body in (
        ("/v1/placements", {"vm": flavor, "dry_run": True}),  # no "dialect": detected
        ("/v1/placements", {"vm": flavor, "dry_run": True, "dialect": "openvim"}),
        ("/v1/capacity", {"vm": flavor}),
        ("/v1/capacity", {"vm": flavor, "dialect": "openvim"}),
        ("/v1/placements", {"batch": [{"vm": flavor, "count": 1}], "dry_run": True}),
    ):
        answer = sqlite_client.post(route, json=body)
        assert answer.status_code == 200, (route, answer.text)
    for route in ("/v1/lint?dialect=openvim", "/v1/convert?dialect=openvim"):
        assert sqlite_client.post(route, json=flavor).status_code == 200, route
    for route, body in (
        ("/v1/lint?dialect=heat", flavor),
        ("/v1/convert?dialect=nfvplace", flavor),
        ("/v1/hosts/fake-host-1?dialect=openvim", host),
    ):
        refused = sqlite_client.request("PUT" if "hosts" in route else "POST", route, json=body)
        assert refused.status_code == 422, route
        assert "reads as openvim" in refused.json()["detail"], route
    capacity = sqlite_client.post("/v1/capacity", json={"vm": flavor, "dialect": "heat"})
    assert capacity.status_code == 422
    assert '"vm" is not written in heat (it reads as openvim)' in capacity.json()["detail"]


def test_a_dialect_document_is_gated_by_lint(sqlite_client: TestClient, root: Path) -> None:
    import yaml

    server = yaml.safe_load((root / "examples" / "dialects" / "openvim-vbras.yaml").read_text())
    server["numas"][0]["memory"] = 0  # converts to a cpu-set of 0 MiB: NFV204
    lint = sqlite_client.post("/v1/lint", json=server).json()
    refused = {f["rule"] for f in lint["findings"] if f["severity"] == "error"}
    assert refused == {"NFV204"}
    for route in ("/v1/placements", "/v1/capacity"):
        answer = sqlite_client.post(route, json={"vm": server})
        assert answer.status_code == 422, answer.text
        assert answer.json()["code"] == "nfvplace.input.invalid"
        findings = answer.json()["findings"]
        assert {f["rule"] for f in findings if f["severity"] == "error"} == refused


def test_a_vnf_with_member_files_is_refused_with_the_command_that_inlines_them(
    sqlite_client: TestClient, root: Path
) -> None:
    import json
    import subprocess
    import sys

    import yaml

    template = root / "examples" / "vnf" / "ran-site.yaml"
    for chd in sorted((root / "examples" / "fleet").glob("*.yaml")):
        data = yaml.safe_load(chd.read_text())
        assert sqlite_client.put(f"/v1/hosts/{data['id']}", json=data).status_code == 201
    refused = sqlite_client.post(
        "/v1/placements", json={"vnf": yaml.safe_load(template.read_text()), "dry_run": True}
    )
    assert refused.status_code == 422
    assert refused.json()["code"] == "nfvplace.input.reference"
    assert refused.json()["members"] == ["du", "cu-up"]
    assert "nfvplace convert TEMPLATE.yaml -f json" in refused.json()["detail"]
    inlined = subprocess.run(
        [sys.executable, "-m", "nfvplace", "convert", str(template), "-f", "json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    answer = sqlite_client.post(
        "/v1/placements", json={"vnf": json.loads(inlined), "dry_run": True}
    )
    assert answer.status_code == 200, answer.text
    assert {c["vm"] for c in answer.json()["configurations"]} == {"vran-du", "cu-up", "cu-cp"}


def test_a_descriptor_lint_refuses_is_a_422_not_written(sqlite_client: TestClient) -> None:
    body = (DATA.parent / "descriptors" / "vcpus-contradict-cpu-sets.json").read_bytes()
    answer = sqlite_client.post(
        "/v1/convert?to=osm", content=body, headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 422, answer.text
    assert "NFV105" in answer.text
