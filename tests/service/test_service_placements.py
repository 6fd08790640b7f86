"""`/v1/placements` over SQLite and PostgreSQL."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from fastapi.testclient import TestClient
from service_hosts import host, vm
from service_support import auth, sequential_count
from sqlalchemy import select

from nfvplace.service.live import Placer

DIALECTS = Path(__file__).resolve().parents[1] / "data" / "dialects"


def test_place_get_release(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    answer = client.post("/v1/placements", json={"vm": vm(vcpus=3)}, headers=auth("placer"))
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert answer.headers["location"] == f"/v1/placements/{body['id']}"
    (config,) = body["configurations"]
    assert config["schema"] == "nfvplace/vm-configuration/v1"
    assert config["host"] == "h1"
    assert len(config["cpu_sets"][0]["vcpu_pins"]) == 3
    assert client.get(f"/v1/placements/{body['id']}", headers=auth("reader")).json() == body
    assert client.delete(f"/v1/placements/{body['id']}").status_code == 204
    gone = client.get(f"/v1/placements/{body['id']}")
    assert gone.status_code == 404
    assert gone.json()["code"] == "nfvplace.placement.not_found"
    assert client.delete(f"/v1/placements/{body['id']}").status_code == 404
    chd = client.get("/v1/hosts/h1").json()["chd"]
    assert all(c["state"] == "free" for n in chd["numa_nodes"] for c in n["cpus"])
    assert client.app.state.store.audit() == []


def test_dry_run_claims_nothing(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    before = client.get("/v1/hosts/h1").json()
    answer = client.post("/v1/placements", json={"vm": vm(), "dry_run": True})
    assert answer.status_code == 200
    assert answer.json()["dry_run"] is True
    assert answer.json()["configurations"][0]["host"] == "h1"
    assert client.get("/v1/hosts/h1").json() == before


def test_no_fit_is_409_with_diagnosis(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1", pages_1g=1))
    answer = client.post("/v1/placements", json={"vm": vm(pages=2)})
    assert answer.status_code == 409
    assert answer.headers["content-type"] == "application/problem+json"
    body = answer.json()
    assert body["code"] == "nfvplace.placement.no_fit"
    assert body["diagnosis"]["hosts_considered"] == 1
    assert body["diagnosis"]["rejections"][0]["reason"] == "hugepages"
    assert body["detail"] == body["diagnosis"]["summary"]


def test_invalid_vm_is_422_with_findings(client: TestClient) -> None:
    bad = vm()
    bad["cpu_sets"][0]["hugepage"] = bad["cpu_sets"][0].pop("hugepages")
    answer = client.post("/v1/placements", json={"vm": bad})
    assert answer.status_code == 422
    body = answer.json()
    assert body["code"] == "nfvplace.input.invalid"
    assert body["findings"][0]["path"] == "cpu_sets[0].hugepage"
    assert body["findings"][0]["hint"] == "did you mean 'hugepages'?"
    assert body["findings"][0]["severity"] == "error"


def test_a_dialect_document_lint_refuses_is_not_placed(client: TestClient) -> None:
    # the reader converts it, but vCPU 2 is in both guest NUMA nodes: lint refuses it (NFV101)
    specs = {
        "hw:cpu_policy": "dedicated",
        "hw:numa_nodes": "2",
        "hw:numa_cpus.0": "0,1,2",
        "hw:numa_cpus.1": "2,3",
        "hw:numa_mem.0": "1024",
        "hw:numa_mem.1": "1024",
    }
    flavor = {"flavor": {"name": "dp", "vcpus": 4, "ram": 2048, "extra_specs": specs}}
    client.put("/v1/hosts/h1", json=host("h1"), headers=auth("admin"))
    answer = client.post("/v1/placements", json={"vm": flavor, "dialect": "openstack-flavor"})
    assert answer.status_code == 422, answer.text
    assert "NFV101" in {finding["rule"] for finding in answer.json()["findings"]}
    assert client.get("/v1/placements").json()["placements"] == []


def test_a_dialect_document_missing_what_placement_needs_is_not_placed(
    client: TestClient,
) -> None:
    # lint only warns (NFV007: a `${...}` placeholder), so the gate passes it without a model;
    # the reader then refuses it, as `nfvplace place` does
    flavor = (DIALECTS / "openvim" / "new_flavor.yaml").read_text()
    client.put("/v1/hosts/h1", json=host("h1"), headers=auth("admin"))
    answer = client.post("/v1/placements", json={"vm": flavor})
    assert answer.status_code == 422, answer.text
    assert "does not say everything placement needs" in answer.json()["detail"]
    assert client.get("/v1/placements").json()["placements"] == []


def test_envelope_errors(client: TestClient) -> None:
    for envelope in ({}, {"vm": vm(), "vnf": {}}, {"vm": vm(), "colour": 1}, [1, 2]):
        answer = client.post("/v1/placements", json=envelope)
        assert answer.status_code == 422, envelope
        assert answer.json()["code"] == "nfvplace.service.invalid_request"


def test_idempotency_key_replays_first_answer(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    headers = {"Idempotency-Key": "order-42"}
    first = client.post("/v1/placements", json={"vm": vm()}, headers=headers)
    again = client.post("/v1/placements", json={"vm": vm()}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    chd = client.get("/v1/hosts/h1").json()["chd"]
    dedicated = {c["id"] for n in chd["numa_nodes"] for c in n["cpus"] if c["state"] == "dedicated"}
    (config,) = first.json()["configurations"]
    held = {pu for cs in config["cpu_sets"] for pu in cs["vcpu_pins"].values()}
    held |= {pu for cs in config["cpu_sets"] for pu in cs.get("reserved_siblings", [])}
    assert len(held) >= 2
    assert dedicated == held  # claimed once: exactly the first answer's PUs
    reused = client.post("/v1/placements", json={"vm": vm(vcpus=4)}, headers=headers)
    assert reused.status_code == 422
    assert reused.json()["code"] == "nfvplace.placement.idempotency_key_reused"


@pytest.mark.parametrize(
    ("released", "body", "status", "code"),
    [
        (False, {"vm": vm()}, 201, None),
        (False, {"vm": vm(vcpus=4)}, 422, "nfvplace.placement.idempotency_key_reused"),
        (True, {"vm": vm()}, 409, "nfvplace.placement.released"),
    ],
)
def test_a_replay_answers_as_before_when_nothing_fits_any_more(
    client: TestClient, released: bool, body: dict[str, Any], status: int, code: str | None
) -> None:
    """The key is looked up when a request cannot be placed (a lookup before every placement
    cost a query): a replay on a full fleet still gets the first answer, or the key's problem."""
    client.put("/v1/hosts/h1", json=host("h1"))
    headers = {"Idempotency-Key": "order-9"}
    first = client.post("/v1/placements", json={"vm": vm()}, headers=headers)
    assert first.status_code == 201
    if released:
        assert client.delete(first.headers["location"]).status_code == 204
    while client.post("/v1/placements", json={"vm": vm()}).status_code == 201:
        pass  # until the fleet is full
    again = client.post("/v1/placements", json=body, headers=headers)
    assert again.status_code == status, again.text
    if code is None:
        assert again.json() == first.json()
        assert again.headers["idempotent-replayed"] == "true"
    else:
        assert again.json()["code"] == code
    assert client.app.state.store.audit() == []


def test_vnf_places_every_member(client: TestClient) -> None:
    # 5 cores a node: 4 whole ones besides the host-reserved PU 0's core for each 4-vCPU member
    client.put("/v1/hosts/h1", json=host("h1", cores=5))
    client.put("/v1/hosts/h2", json=host("h2", cores=5))
    vnf = {
        "schema": "nfvplace/vnf/v1",
        "name": "upf",
        "members": [{"name": "dp", "descriptor": vm(vcpus=4, pages=2), "count": 3}],
    }
    answer = client.post("/v1/placements", json={"vnf": vnf})
    assert answer.status_code == 201, answer.text
    configs = answer.json()["configurations"]
    assert len(configs) == 3
    assert len({c["instance"] for c in configs}) == 3
    assert client.app.state.store.audit() == []
    assert client.delete(f"/v1/placements/{answer.json()['id']}").status_code == 204
    assert client.app.state.store.audit() == []


def test_fleet_fills_up_then_no_fit(client: TestClient, placer: Placer) -> None:
    chd = host("h1", cores=3, pages_1g=8, vfs=8)  # node 0: PU 0's core is never whole
    client.put("/v1/hosts/h1", json=chd)
    placed = []
    while True:
        answer = client.post("/v1/placements", json={"vm": vm(vcpus=2)})
        if answer.status_code != 201:
            break
        placed.append(answer.json())
    assert answer.json()["code"] == "nfvplace.placement.no_fit"
    assert len(placed) == sequential_count(placer, [chd], vm(vcpus=2)) > 1
    pus = [
        (c["host"], pu)
        for p in placed
        for c in p["configurations"]
        for pu in c["cpu_sets"][0]["vcpu_pins"].values()
    ]
    assert len(pus) == len(set(pus))
    assert client.app.state.store.audit() == []


def test_render_a_placement_as_libvirt_and_openstack(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    placed = client.post("/v1/placements", json={"vm": vm(vcpus=2, paired=True)}).json()
    (config,) = placed["configurations"]
    answer = client.get(f"/v1/placements/{placed['id']}/render", headers=auth("reader"))
    assert answer.status_code == 200, answer.text
    (rendered,) = answer.json()["renders"]
    assert rendered["format"] == "libvirt"
    domain = ElementTree.fromstring(rendered["text"])
    pins = {p.get("vcpu"): p.get("cpuset") for p in domain.iter("vcpupin")}
    assert pins == {str(v): str(pu) for v, pu in config["cpu_sets"][0]["vcpu_pins"].items()}
    flavor = client.get(f"/v1/placements/{placed['id']}/render", params={"format": "openstack"})
    assert "hw:cpu_policy" in flavor.json()["renders"][0]["text"]
    bad = client.get(f"/v1/placements/{placed['id']}/render", params={"format": "docx"})
    assert bad.status_code == 422
    client.delete(f"/v1/placements/{placed['id']}")
    assert client.get(f"/v1/placements/{placed['id']}/render").status_code == 404


def test_a_request_is_one_log_line_naming_its_placement(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    with caplog.at_level(logging.INFO, logger="nfvplace.service"):
        placed = client.post("/v1/placements", json={"vm": vm()}, headers={"X-Request-ID": "r-1"})
        client.post("/v1/placements", json={"vm": vm(), "dry_run": True})
    assert placed.status_code == 201
    lines = [r for r in caplog.records if r.name == "nfvplace.service"]
    assert [r.getMessage() for r in lines] == ["request", "request"]
    first, dry = (vars(r) for r in lines)
    assert first["route"] == "/v1/placements"
    assert first["status"] == 201
    assert first["placement"] == placed.json()["id"]
    assert first["hosts"] == ["h1"]
    assert "placement" not in dry  # a dry run places nothing


def test_only_keyed_requests_keep_a_request_hash(client: TestClient) -> None:
    from nfvplace.store.records import PLACEMENTS

    client.put("/v1/hosts/h1", json=host("h1"))
    keyed = client.post("/v1/placements", json={"vm": vm()}, headers={"Idempotency-Key": "k-1"})
    plain = client.post("/v1/placements", json={"vm": vm()})
    store = client.app.state.store  # type: ignore[attr-defined]
    with store.engine.connect() as conn:
        hashes = dict(conn.execute(select(PLACEMENTS.c.id, PLACEMENTS.c.request_hash)).all())
    assert len(hashes[keyed.json()["id"]]) == 64  # sha256, checked on a replay
    assert hashes[plain.json()["id"]] == ""  # no key: nothing will ever be replayed


def test_a_body_sent_again_is_parsed_once_and_a_refused_one_never_kept(client: TestClient) -> None:
    import json as json_module

    from nfvplace.service.problems import ProblemError
    from nfvplace.service.routers.placements import parsed_request

    body = json_module.dumps({"vm": vm(name="cached-vm")}).encode()
    first = parsed_request(body, "application/json")
    assert parsed_request(body, "application/json") is first  # kept by its bytes
    assert parsed_request(body + b" ", "application/json") is not first
    assert first.body == {"vm": vm(name="cached-vm")}
    refused = json_module.dumps({"vm": vm(name="")}).encode()
    for _ in range(2):  # refused each time: an error is never kept
        with pytest.raises(ProblemError):
            parsed_request(refused, "application/json")
    client.put("/v1/hosts/h1", json=host("h1"))
    headers = {"Content-Type": "application/json"}
    answers = [client.post("/v1/placements", content=body, headers=headers) for _ in range(2)]
    assert [a.status_code for a in answers] == [201, 201]
    assert answers[0].json()["id"] != answers[1].json()["id"]  # two placements, not a replay


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_claiming_placements_run_on_one_placing_thread_or_the_event_loop(
    backend: str, placer: Placer, request: pytest.FixtureRequest
) -> None:
    """A worker's claiming placements run, in turn, on one thread of their own (by default on
    PostgreSQL, always on SQLite), or on SQLite on the event loop where nothing is to be read or
    waited for long (a single VM on the built index); dry runs on the shared pool."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from service_support import TOKENS

    from nfvplace.service.app import create_app
    from nfvplace.service.settings import Settings

    threads: list[str] = []

    def recording(*args: object, **options: object) -> object:
        try:
            asyncio.get_running_loop()
            threads.append("event loop")
        except RuntimeError:
            threads.append(threading.current_thread().name)
        return placer(*args, **options)

    url = str(request.getfixturevalue(f"{backend}_url"))
    app = create_app(Settings(db_url=url, tokens=TOKENS), placer=recording)  # type: ignore[arg-type]
    with TestClient(app, headers=auth("admin")) as client:
        for k in range(6):  # room for the 14 VMs and the dry run
            client.put(f"/v1/hosts/h{k}", json=host(f"h{k}"))
        with ThreadPoolExecutor(6) as clients:
            answers = list(
                clients.map(lambda _: client.post("/v1/placements", json={"vm": vm()}), range(12))
            )
        claiming = set(threads)
        threads.clear()
        one_by_one = [client.post("/v1/placements", json={"vm": vm()}) for _ in range(2)]
        sequential = list(threads)
        threads.clear()
        dry = client.post("/v1/placements", json={"vm": vm(), "dry_run": True})
        dry_runs = set(threads)
        assert [a.status_code for a in answers + one_by_one] == [201] * 14, [
            a.text[:200] for a in answers + one_by_one if a.status_code != 201
        ]
        assert dry.status_code == 200
        assert client.app.state.store.audit() == []  # type: ignore[attr-defined]
    if backend == "sqlite":
        placing = claiming - {"event loop"}
        assert len(placing) == 1  # the first one builds the index there
        assert next(iter(placing)).startswith("nfvplace-placing")
        assert sequential == ["event loop"] * 2
        assert dry_runs
        assert not any(n.startswith("nfvplace-placing") or n == "event loop" for n in dry_runs)
    else:
        assert "event loop" not in claiming | set(sequential) | dry_runs
        assert len(claiming | set(sequential)) == 1
        assert next(iter(claiming)).startswith("nfvplace-placing")
        assert not any(name.startswith("nfvplace-placing") for name in dry_runs)
