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
    assert load_tokens(path)["admin"] == tuple(TOKENS["admin"])
