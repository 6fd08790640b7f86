"""`nfvplace serve` refusals and `nfvplace openapi`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from service_support import ROOT
from typer.testing import CliRunner

from nfvplace.cli import _register, app


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    _register()
    return CliRunner()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "refusing to start without authentication"),
        (["--no-auth", "--host", "0.0.0.0"], "only binds to loopback"),
        (["--no-auth", "--tokens", "t.yaml"], "not both"),
    ],
)
def test_serve_refuses_unsafe_settings(
    runner: CliRunner, tmp_path: Path, args: list[str], message: str
) -> None:
    result = runner.invoke(app, ["serve", "--db", f"sqlite:///{tmp_path / 'x.db'}", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "x.db").exists()  # refused before touching the database


def test_serve_reports_unreachable_database(runner: CliRunner, tmp_path: Path) -> None:
    url = f"postgresql+psycopg://nobody@/x?host={tmp_path}&port=1&connect_timeout=2"
    result = runner.invoke(app, ["serve", "--no-auth", "--db", url])
    assert result.exit_code == 1
    assert "cannot open the database" in result.output


def test_openapi_command_writes_the_published_document(runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "openapi.json"
    result = runner.invoke(app, ["openapi", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_text() == (ROOT / "api" / "openapi.json").read_text()


@pytest.mark.parametrize(("workers", "single_accept"), [(1, None), (2, "1")])
def test_workers_take_connections_one_at_a_time(
    runner: CliRunner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
    single_accept: str | None,
) -> None:
    """With several workers on one socket, libuv accepts one connection per wake-up, so that a
    burst of keep-alive clients spreads over the workers (measured: 106 placements/s with all 8 of
    the benchmark's connections on one worker, 170-187/s spread)."""
    import uvicorn

    from nfvplace.service import logs

    monkeypatch.setattr(logs, "configure", lambda *_a: None)  # keep this process's loggers
    seen: dict[str, str | None] = {}
    # serve sets variables for its workers: it sets them here on a copy of the environment
    environment = {k: v for k, v in os.environ.items() if k != "UV_TCP_SINGLE_ACCEPT"}
    monkeypatch.setattr(os, "environ", environment)
    monkeypatch.setattr(
        uvicorn, "run", lambda *_a, **_k: seen.update(env=os.environ.get("UV_TCP_SINGLE_ACCEPT"))
    )
    db = f"sqlite:///{tmp_path / 'x.db'}"
    result = runner.invoke(app, ["serve", "--no-auth", "--db", db, "--workers", str(workers)])
    assert result.exit_code == 0, result.output
    assert seen == {"env": single_accept}
