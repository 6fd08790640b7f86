"""HTTP-level behaviour: problem documents, bounds, request ids, health, metrics, lint, schemas."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from service_hosts import host, vm
from service_support import TOKENS, auth

from nfvplace.service import faults


def test_problem_documents_for_unknown_routes(sqlite_client: TestClient) -> None:
    answer = sqlite_client.get("/v1/nothing-here")
    assert answer.status_code == 404
    assert answer.headers["content-type"] == "application/problem+json"
    body = answer.json()
    assert body["code"] == "nfvplace.service.not_found"
    assert body["type"] == "https://nfvplace.dev/errors/nfvplace.service.not_found"
    assert body["status"] == 404
    assert body["instance"] == "/v1/nothing-here"
    method = sqlite_client.patch("/v1/hosts/h1")
    assert method.status_code == 405
    assert method.json()["code"] == "nfvplace.service.method_not_allowed"


def test_request_id_is_echoed_and_generated(sqlite_client: TestClient) -> None:
    given = sqlite_client.get("/v1/hosts/x", headers={"X-Request-ID": "abc-123"})
    assert given.headers["x-request-id"] == "abc-123"
    assert given.json()["request_id"] == "abc-123"
    made = sqlite_client.get("/healthz", headers={"X-Request-ID": "bad id with spaces"})
    assert len(made.headers["x-request-id"]) == 32


def test_body_size_is_bounded(app_factory: Callable[..., Any], sqlite_url: str) -> None:
    from service_support import auth

    with TestClient(app_factory(sqlite_url, max_body_bytes=10_000), headers=auth("admin")) as c:
        big = host("h1", nodes=8, cores=64)
        answer = c.put("/v1/hosts/h1", json=big)
        assert answer.status_code == 413
        assert answer.json()["code"] == "nfvplace.input.too_large"

        def chunks() -> Any:  # no Content-Length: counted while streaming
            for _ in range(20):
                yield b" " * 1000

        streamed = c.post("/v1/lint", content=chunks())
        assert streamed.status_code == 413
        assert c.get("/v1/hosts/h1").status_code == 404


@pytest.mark.parametrize(
    ("content", "content_type", "code", "status"),
    [
        (b"{not json", "application/json", "nfvplace.input.syntax", 422),
        (b"\xff\xfe", "application/json", "nfvplace.input.unreadable", 422),
        (b"[" * 100 + b"]" * 100, "application/json", "nfvplace.input.unsafe", 422),
        # as deep as Python's own parser refuses: the same refusal as 100 levels (docs/errors.md)
        (b"[" * 100000 + b"]" * 100000, "application/json", "nfvplace.input.unsafe", 422),
        (b"a: !!python/object:os.system {}", "application/yaml", "nfvplace.input.syntax", 422),
        # XML is read (SOL006), and what is not a host is refused as such
        (b"<chd/>", "application/xml", "nfvplace.input.invalid", 422),
        (b"<chd/>", "application/pdf", "nfvplace.service.unsupported_media_type", 415),
    ],
)
def test_malformed_bodies_are_problems(
    sqlite_client: TestClient, content: bytes, content_type: str, code: str, status: int
) -> None:
    answer = sqlite_client.put(
        "/v1/hosts/h1", content=content, headers={"Content-Type": content_type}
    )
    assert answer.status_code == status
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == code


def test_health_readiness_metrics(sqlite_client: TestClient) -> None:
    assert sqlite_client.get("/healthz").json() == {"status": "ok"}
    assert sqlite_client.get("/readyz").json() == {"status": "ready"}
    sqlite_client.put("/v1/hosts/h1", json=host("h1", pages_1g=1))
    assert sqlite_client.post("/v1/placements", json={"vm": vm(pages=1)}).status_code == 201
    assert sqlite_client.post("/v1/placements", json={"vm": vm(pages=4)}).status_code == 409
    text = sqlite_client.get("/metrics").text
    assert 'nfvplace_placements_total{outcome="placed"} 1.0' in text
    assert 'nfvplace_placements_total{outcome="no_fit"} 1.0' in text
    assert 'nfvplace_no_fit_reasons_total{reason="hugepages"} 1.0' in text
    assert "nfvplace_placement_conflicts_total 0.0" in text
    assert (
        'nfvplace_http_request_duration_seconds_count{method="POST",route="/v1/placements",status="201"} 1.0'
        in text
    )


def test_readyz_fails_when_database_is_gone(
    app_factory: Callable[..., Any], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "sub" / "n.db"
    with TestClient(app_factory(f"sqlite:///{db}")) as c:
        assert c.get("/readyz").status_code == 200
        monkeypatch.setattr(faults, "PROBE_EVERY_S", 0.0)  # probed again at once
        c.app.state.store.engine.dispose()
        (tmp_path / "sub" / "n.db").unlink()
        (tmp_path / "sub").chmod(0o500)
        (tmp_path / "sub").rename(tmp_path / "gone")
        answer = c.get("/readyz")
        (tmp_path / "gone").chmod(0o700)
    assert answer.status_code == 503
    assert answer.json()["code"] == "nfvplace.store.unavailable"
    assert answer.headers["retry-after"] == "1"


def test_lint_endpoint(sqlite_client: TestClient) -> None:
    clean = sqlite_client.post("/v1/lint", json=vm())
    assert clean.status_code == 200
    assert clean.json()["errors"] == 0
    bad = vm()
    bad["cpu_sets"][0]["vcpu"] = bad["cpu_sets"][0].pop("vcpus")
    report = sqlite_client.post("/v1/lint", json=bad).json()
    assert report["errors"] >= 1
    paths = [f["path"] for f in report["findings"]]
    assert "cpu_sets[0].vcpu" in paths
    syntax = sqlite_client.post(
        "/v1/lint", content=b"schema: [", headers={"Content-Type": "application/yaml"}
    )
    assert syntax.status_code == 200
    first = syntax.json()["findings"][0]
    assert (first["rule"], first["code"]) == ("NFV000", "nfvplace.input.syntax")  # as the CLI says


@pytest.mark.parametrize("name", ["chd", "vmd", "vnf", "vm-configuration", "vmd.v1.json"])
def test_schemas(sqlite_client: TestClient, name: str) -> None:
    answer = sqlite_client.get(f"/v1/schemas/{name}")
    assert answer.status_code == 200
    assert answer.json()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_unknown_schema(sqlite_client: TestClient) -> None:
    answer = sqlite_client.get("/v1/schemas/nope")
    assert answer.status_code == 404
    assert "vmd" in answer.json()["detail"]


def _comparable(answer: Any) -> tuple[int, str, Any, bool]:
    """An answer without what differs between two requests (ids, the path asked)."""
    body = answer.json()
    for field in ("instance", "request_id", "id", "placement"):
        body.pop(field, None)
    for configuration in body.get("configurations", []):
        configuration.pop("instance")  # named after the placement's id
    return answer.status_code, answer.headers["content-type"], body, "location" in answer.headers


READER = {"Authorization": "Bearer " + TOKENS["reader"][0]}


@pytest.mark.parametrize(
    ("headers", "content", "media", "status"),
    [
        ({}, None, None, 201),  # a placement
        ({"Idempotency-Key": "x" * 256}, None, None, 422),
        ({"Authorization": "Bearer nope"}, None, None, 401),
        ({"Authorization": "Basic abc"}, None, None, 401),
        (READER, None, None, 403),
        ({}, b"{not json", "application/json", 422),
        ({}, b"vm: [", "application/yaml", 422),
        ({}, b"<vm/>", "application/xml", 422),
        ({}, b'{"vm": {"name": 1}}', "application/json", 422),
        ({}, b'{"nothing": 1}', "application/json", 422),
        ({}, b"{}", "text/csv", 415),
    ],
)
def test_the_router_answers_placements_under_any_root_path(
    app_factory: Callable[..., Any],
    sqlite_url: str,
    headers: dict[str, str],
    content: bytes | None,
    media: str | None,
    status: int,
) -> None:
    """`POST /v1/placements` goes through FastAPI's router as every route does (its errors through
    the app's handlers, as problem documents), at its path and under a root path alike."""
    with TestClient(app_factory(sqlite_url), root_path="/api", headers=auth("admin")) as c:
        assert c.put("/v1/hosts/h1", json=host("h1")).status_code == 201
        sent = {**headers, **({"Content-Type": media} if media else {})}
        answers = []
        for path in ("/v1/placements", "/api/v1/placements"):
            if content is None:
                answer = c.post(path, json={"vm": vm()}, headers=sent)
            else:
                answer = c.post(path, content=content, headers=sent)
            answers.append(_comparable(answer))
            if answer.status_code == 201:  # the second is placed as the first was
                assert c.delete(answer.headers["location"]).status_code == 204
        assert answers[0] == answers[1]
        assert answers[0][0] == status
        media_type = "application/json" if status == 201 else "application/problem+json"
        assert answers[0][1] == media_type
