"""A Python client generated from api/openapi.json (openapi-python-client, offline) drives the whole
flow against a real server: PUT hosts, POST a placement, GET it, render it, DELETE it. The functions
are named after the published operationIds and the request bodies are typed models."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from service_hosts import host, vm
from service_support import ROOT, TOKENS, free_port

from nfvplace.service.app import create_app, import_placer
from nfvplace.service.settings import Settings

PACKAGE = "nfvplace_generated_client"


class ThreadedServer(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # running in a thread
        pass


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The client package generated from the published document, imported."""
    folder = tmp_path_factory.mktemp("client")
    tool = Path(sys.executable).with_name("openapi-python-client")
    run = subprocess.run(
        [
            str(tool),
            "generate",
            "--path",
            str(ROOT / "api" / "openapi.json"),
            "--output-path",
            str(folder / PACKAGE),
            "--meta",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    unsupported = {
        line.strip() for line in (run.stdout + run.stderr).splitlines() if "Unsupported" in line
    }
    # YAML bodies are an alternative the generator skips; the JSON body is generated typed
    assert unsupported <= {"Unsupported content type application/yaml"}, run.stdout
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory, placer_path: str) -> Iterator[str]:
    db = tmp_path_factory.mktemp("client-db") / "n.db"
    app = create_app(
        Settings(db_url=f"sqlite:///{db}", tokens=TOKENS), placer=import_placer(placer_path)
    )
    port = free_port()
    server = ThreadedServer(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def _module(package: Any, dotted: str) -> Any:
    return importlib.import_module(f"{package.__name__}.{dotted}")


def test_generated_functions_are_named_by_operation_id(generated: Any) -> None:
    expected = {
        "hosts": {"put_host", "get_host", "list_hosts", "delete_host"},
        "placements": {"create_placement", "get_placement", "render_placement", "delete_placement"},
        "lint": {"lint_descriptor"},
        "schemas": {"get_schema"},
    }
    for tag, names in expected.items():
        folder = Path(generated.__file__).parent / "api" / tag
        assert names <= {p.stem for p in folder.glob("*.py")}, tag
    create = _module(generated, "api.placements.create_placement")
    body = inspect.signature(create.sync_detailed).parameters["body"].annotation
    assert "PlacementRequest" in str(body), body


def test_generated_client_places_end_to_end(generated: Any, server_url: str) -> None:
    models = _module(generated, "models")
    hosts = _module(generated, "api.hosts")
    placements = _module(generated, "api.placements")
    for name in ("put_host", "get_host", "list_hosts", "delete_host"):
        _module(hosts, name)
    for name in ("create_placement", "get_placement", "render_placement", "delete_placement"):
        _module(placements, name)
    client = generated.AuthenticatedClient(base_url=server_url, token=TOKENS["admin"][0])

    for name in ("h1", "h2"):
        put = hosts.put_host.sync_detailed(
            host_id=name, client=client, body=models.ComputeHostDescriptor.from_dict(host(name))
        )
        assert put.status_code == 201, put.content
        assert isinstance(put.parsed, models.StoredHostView)
    listed = hosts.list_hosts.sync(client=client)
    assert sorted(h.id for h in listed.hosts) == ["h1", "h2"]

    request = models.PlacementRequest(vm=models.VmDescriptor.from_dict(vm("client-vm")))
    created = placements.create_placement.sync_detailed(client=client, body=request)
    assert created.status_code == 201, created.content
    placement = created.parsed
    assert isinstance(placement, models.PlacementView)
    assert placement.id.startswith("pl-")

    got = placements.get_placement.sync(placement_id=placement.id, client=client)
    assert isinstance(got, models.PlacementView)
    assert got.id == placement.id
    assert len(got.configurations) == 1

    rendered = placements.render_placement.sync(placement_id=placement.id, client=client)
    assert isinstance(rendered, models.RenderView)
    assert "<domain" in rendered.renders[0].text

    deleted = placements.delete_placement.sync_detailed(placement_id=placement.id, client=client)
    assert deleted.status_code == 204
    gone = placements.get_placement.sync_detailed(placement_id=placement.id, client=client)
    assert gone.status_code == 404
    assert isinstance(gone.parsed, models.Problem)
    assert gone.parsed.code == "nfvplace.placement.not_found"
    for name in ("h1", "h2"):
        assert hosts.delete_host.sync_detailed(host_id=name, client=client).status_code == 204
