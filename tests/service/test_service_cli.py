"""`nfvplace serve` refusals and `nfvplace openapi`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from service_support import ROOT, TOKENS
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
        (["--no-auth", "--placing-threads", "0"], "--placing-threads"),
        (["--no-auth", "--kubeconfig", "k", "--in-cluster"], "--kubeconfig FILE or --in-cluster"),
        (["--no-auth", "--kube-context", "c"], "--kube-context needs --kubeconfig"),
        (["--no-auth", "--kubeconfig", "/nonexistent"], "/nonexistent: cannot read the cluster"),
        (["--no-auth", "--unregistered-nodes", "maybe"], "--unregistered-nodes"),
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


def test_serve_says_in_a_line_when_its_workers_cannot_listen(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nfvplace.service import logs

    # serve sets up logging and variables for its workers: here, on copies, so that the tests
    # that run after this one in the same process keep theirs
    monkeypatch.setattr(logs, "configure", lambda *_a: None)
    monkeypatch.setattr(os, "environ", dict(os.environ))
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(yaml.safe_dump(TOKENS))
    tokens.chmod(0o600)
    db = f"sqlite:///{tmp_path / 'x.db'}"
    args = ["serve", "--tokens", str(tokens), "--db", db, "--workers", "2"]
    # 192.0.2.1 is a documentation address (RFC 5737): no machine has it, so it cannot be bound
    result = runner.invoke(app, [*args, "--host", "192.0.2.1", "--port", "8123"])
    assert result.exit_code == 1, result.output
    assert "error: cannot listen on 192.0.2.1:8123" in result.output
    assert "Traceback" not in result.output
