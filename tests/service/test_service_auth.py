"""Bearer-token roles, and the settings the server refuses to start with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from service_hosts import host, vm
from service_support import TOKENS, auth

from nfvplace.service.settings import Settings, SettingsError, load_tokens, resolve_tokens

# (method, path, body, role that is enough, a role that is not)
ROUTES = [
    ("GET", "/v1/hosts", None, "reader", None),
    ("GET", "/v1/hosts/h1", None, "reader", None),
    ("PUT", "/v1/hosts/h2", host("h2"), "host-agent", "placer"),
    ("POST", "/v1/placements", {"vm": vm()}, "placer", "host-agent"),
    ("POST", "/v1/lint", vm(), "reader", None),
    ("POST", "/v1/convert", vm(), "reader", None),
    ("GET", "/v1/schemas/vmd", None, "reader", None),
    ("DELETE", "/v1/hosts/h1", None, "admin", "host-agent"),
]


@pytest.mark.parametrize(("method", "path", "body", "enough", "not_enough"), ROUTES)
def test_roles(
    sqlite_client: TestClient,
    method: str,
    path: str,
    body: Any,
    enough: str,
    not_enough: str | None,
) -> None:
    sqlite_client.put("/v1/hosts/h1", json=host("h1"))
    anonymous = sqlite_client.request(method, path, json=body, headers={"Authorization": ""})
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert anonymous.json()["code"] == "nfvplace.service.unauthorized"
    wrong = sqlite_client.request(
        method, path, json=body, headers={"Authorization": "Bearer not-a-known-token-at-all"}
    )
    assert wrong.status_code == 401
    if not_enough is not None:
        refused = sqlite_client.request(method, path, json=body, headers=auth(not_enough))
        assert refused.status_code == 403
        assert refused.json()["code"] == "nfvplace.service.forbidden"
    allowed = sqlite_client.request(method, path, json=body, headers=auth(enough))
    assert allowed.status_code < 300, allowed.text


def test_health_and_metrics_need_no_token(sqlite_client: TestClient) -> None:
    for path in ("/healthz", "/readyz", "/metrics"):
        assert sqlite_client.get(path, headers={"Authorization": ""}).status_code == 200


def test_refuses_to_start_without_tokens() -> None:
    with pytest.raises(SettingsError, match="without authentication"):
        resolve_tokens(Settings())


@pytest.mark.parametrize(
    ("host_", "ok"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
    ],
)
def test_no_auth_only_on_loopback(host_: str, ok: bool) -> None:
    settings = Settings(no_auth=True, host=host_)
    if ok:
        assert resolve_tokens(settings) is None
    else:
        with pytest.raises(SettingsError, match="only binds to loopback"):
            resolve_tokens(settings)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("reader: [short]", "at least 16"),
        ("wizard: [aaaaaaaaaaaaaaaaaaaa]", "unknown role"),
        ("reader: token-not-a-list-000000", "list of non-empty strings"),
        ("- a\n- b\n", "map roles"),
        ("reader: [", "not valid YAML"),
        ("reader: []", "no tokens"),
    ],
)
def test_bad_tokens_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(SettingsError) as caught:
        load_tokens(path)
    assert message in str(caught.value)
    assert caught.value.code == "nfvplace.service.config"


def test_no_auth_app_admits_everyone(
    app_factory: Callable[..., Any], sqlite_url: str, placer: Any
) -> None:
    from nfvplace.service import create_app

    app = create_app(Settings(db_url=sqlite_url, no_auth=True), placer=placer)
    with TestClient(app) as c:
        assert c.put("/v1/hosts/h1", json=host("h1")).status_code == 201
        assert c.delete("/v1/hosts/h1").status_code == 204


def test_tokens_file_roles(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "tokens.yaml"
    path.write_text(yaml.safe_dump(TOKENS))
    path.chmod(0o600)
    assert load_tokens(path)["admin"] == tuple(TOKENS["admin"])


GOOD = "reader: [reader-token-0123456789]\nadmin: [admin-token-0123456789ab]\n"


@pytest.mark.parametrize(
    ("raw", "mode", "message"),
    [
        (GOOD.encode(), 0o644, "chmod 600"),
        (GOOD.encode(), 0o606, "chmod 600"),
        (b"reader: [\xff\xfe-not-utf8-0123456789]\n", 0o600, "not UTF-8 text (byte 9)"),
        (
            b"reader: [same-token-0123456789]\nplacer: [same-token-0123456789]\n",
            0o600,
            "the same token is given 2 times (reader, placer)",
        ),
    ],
    ids=["world-readable", "world-writable", "not-utf8", "same-token-two-roles"],
)
def test_unsafe_tokens_files_are_refused(
    tmp_path: Path, raw: bytes, mode: int, message: str
) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_bytes(raw)
    path.chmod(mode)
    with pytest.raises(SettingsError) as caught:
        load_tokens(path)
    text = str(caught.value) + " ".join(i.message for i in caught.value.issues or ())
    assert message in text
    assert caught.value.code == "nfvplace.service.config"


@pytest.mark.parametrize(
    ("raw", "mode", "message"),
    [
        (GOOD.encode(), 0o644, "chmod 600"),
        (b"reader: [\xff\xfe-not-utf8-0123456789]\n", 0o600, "not UTF-8 text"),
        (
            b"reader: [same-token-0123456789]\nplacer: [same-token-0123456789]\n",
            0o600,
            "reader: the same token is given 2 times (reader, placer) (fix: give each token",
        ),
    ],
    ids=["world-readable", "not-utf8", "same-token-two-roles"],
)
def test_serve_refuses_an_unsafe_tokens_file_in_one_line(
    tmp_path: Path, raw: bytes, mode: int, message: str
) -> None:
    from typer.testing import CliRunner

    from nfvplace.cli import _register, app

    _register()
    path = tmp_path / "tokens.yaml"
    path.write_bytes(raw)
    path.chmod(mode)
    result = CliRunner().invoke(app, ["serve", "--tokens", str(path), "--db", "sqlite://"])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {path}: ")
    assert message in line


def test_docs_need_a_token_unless_made_public(placer: Any, sqlite_url: str) -> None:
    from nfvplace.service import create_app

    private = create_app(Settings(db_url=sqlite_url, tokens=TOKENS), placer=placer)
    with TestClient(private) as c:
        assert c.get("/docs").status_code == 404
        assert c.get("/openapi.json").status_code == 401
        answer = c.get("/openapi.json", headers=auth("reader"))
        assert answer.status_code == 200
        assert answer.json()["info"]["title"] == "nfvplace"
    public = create_app(Settings(db_url=sqlite_url, tokens=TOKENS, public_docs=True), placer=placer)
    with TestClient(public) as c:
        assert c.get("/docs").status_code == 200
        assert c.get("/openapi.json").status_code == 200
    open_app = create_app(Settings(db_url=sqlite_url, no_auth=True), placer=placer)
    with TestClient(open_app) as c:
        assert c.get("/openapi.json").status_code == 200
