"""`/ui` in process: sign-in cookie, reader role, pages drawn from the store, a dry run claims nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from xml.etree import ElementTree

import pytest
from fastapi.testclient import TestClient
from service_support import TOKENS, auth
from ui_support import ROOT, du_document, du_yaml, host_documents

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def ui(app_factory: Any, sqlite_url: str) -> Iterator[tuple[TestClient, dict[str, Any]]]:
    """A signed-out browser-like client over a store with two hosts and one placed DU."""
    with TestClient(app_factory(sqlite_url), base_url="https://testserver") as c:
        for doc in host_documents():
            assert c.put(f"/v1/hosts/{doc['id']}", json=doc, headers=auth("host-agent")).is_success
        answer = c.post("/v1/placements", json={"vm": du_document()}, headers=auth("placer"))
        assert answer.status_code == 201, answer.text
        yield c, answer.json()


def test_pages_need_a_sign_in(ui: tuple[TestClient, dict[str, Any]]) -> None:
    client, _ = ui
    for path in ("/ui", "/ui/placements", "/ui/dry-run", "/ui/hosts/x"):
        answer = client.get(path, follow_redirects=False)
        assert answer.status_code == 303, path
        assert answer.headers["location"] == "/ui/signin"
    assert 'id="token"' in client.get("/ui/signin").text


def test_sign_in_sets_a_secure_http_only_same_site_cookie(
    ui: tuple[TestClient, dict[str, Any]],
) -> None:
    client, _ = ui
    bad = client.post("/ui/signin", data={"token": "nope"}, follow_redirects=False)
    assert bad.status_code == 401
    assert "unknown token" in bad.text
    good = client.post("/ui/signin", data={"token": TOKENS["reader"][0]}, follow_redirects=False)
    assert good.status_code == 303
    cookie = good.headers["set-cookie"].lower()
    for part in ("nfvplace_ui=", "secure", "httponly", "samesite=strict", "path=/ui"):
        assert part in cookie, cookie
    assert client.get("/ui").status_code == 200
    out = client.post("/ui/signout", follow_redirects=False)
    assert out.status_code == 303
    client.cookies.clear()
    assert client.get("/ui", follow_redirects=False).status_code == 303


def test_bearer_header_works_for_tools(ui: tuple[TestClient, dict[str, Any]]) -> None:
    client, _ = ui
    answer = client.get("/ui", headers=auth("reader"))
    assert answer.status_code == 200
    assert "heatmap" in answer.text


def test_host_page_draws_the_placement(ui: tuple[TestClient, dict[str, Any]]) -> None:
    client, placement = ui
    config = placement["configurations"][0]
    page = client.get(f"/ui/hosts/{config['host']}", headers=auth("reader"))
    assert page.status_code == 200
    svg = page.text[page.text.index("<svg") : page.text.index("</svg>") + 6]
    drawn = {g.get("id"): g.get("class", "") for g in ElementTree.fromstring(svg).iter(f"{SVG}g")}
    for pu in config["cpu_sets"][0]["vcpu_pins"].values():
        assert "vm-0" in drawn[f"pu-{pu}"]
    assert placement["id"] in page.text
    listing = client.get("/ui/placements", headers=auth("reader")).text
    assert placement["id"] in listing
    assert client.get("/ui/hosts/unknown", headers=auth("reader")).status_code == 404


def test_dry_run_shows_the_outcome_and_claims_nothing(
    ui: tuple[TestClient, dict[str, Any]],
) -> None:
    client, _ = ui
    before = client.get("/v1/hosts", headers=auth("reader")).json()
    answer = client.post(
        "/ui/dry-run", data={"descriptor": du_yaml(), "policy": "spread"}, headers=auth("reader")
    )
    assert answer.status_code == 200
    assert 'id="outcome"' in answer.text
    assert "nothing claimed" in answer.text
    assert client.get("/v1/hosts", headers=auth("reader")).json() == before
    broken = client.post("/ui/dry-run", data={"descriptor": "schema: nope"}, headers=auth("reader"))
    assert 'id="error"' in broken.text
    huge = du_yaml().replace(
        "memory_mib: 16384\n    hugepages: {size: 1GiB, count: 16}",
        "memory_mib: 4194304\n    hugepages: {size: 1GiB, count: 4096}",
    )
    assert huge != du_yaml()
    no_fit = client.post("/ui/dry-run", data={"descriptor": huge}, headers=auth("reader"))
    assert 'class="diagnosis"' in no_fit.text
    assert "0/2 hosts" in no_fit.text


def test_dry_run_reads_vendor_dialects(ui: tuple[TestClient, dict[str, Any]]) -> None:
    client, _ = ui
    flavor = (ROOT / "examples" / "dialects" / "openstack-flavor-du.yaml").read_text()
    answer = client.post("/ui/dry-run", data={"descriptor": flavor}, headers=auth("reader"))
    assert answer.status_code == 200
    assert 'id="outcome"' in answer.text, answer.text[-2000:]
