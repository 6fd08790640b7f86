"""Commands that work through many files show the one progress bar (nfvplace/cli/progress.py) on a
terminal's stderr: lint over folders. The bar's own rules (delay, quiet, pipes) are tested with it;
here the delay is set to 0 so that a small folder shows it."""

from __future__ import annotations

import io
import os
import pty
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nfvplace.cli import _register, app
from nfvplace.cli import progress as progress_module

_register()
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[io.TextIOWrapper, int]]:
    """Bars drawn on a pseudo-terminal at once (delay 0); yields it and the fd reading it."""
    leader, follower = pty.openpty()
    stream = open(follower, "w", encoding="utf-8", closefd=True)  # noqa: SIM115
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("NFVPLACE_NO_PROGRESS", raising=False)

    def at_once(items: Iterable[Any], label: str, **kw: Any) -> Iterator[Any]:
        return progress_module.progress(items, label, **{**kw, "stream": stream, "delay": 0})

    monkeypatch.setattr("nfvplace.cli.lint.progress", at_once)
    try:
        yield stream, leader
    finally:
        stream.close()
        os.close(leader)


def _drawn(leader: int) -> str:
    return os.read(leader, 1 << 16).decode()


def test_lint_of_folders_counts_files(terminal: tuple[io.TextIOWrapper, int]) -> None:
    _, leader = terminal
    folder = EXAMPLES / "vms"
    files = sorted(p for p in folder.iterdir() if p.suffix in {".yaml", ".yml", ".json"})
    out = CliRunner().invoke(app, ["lint", str(folder), str(EXAMPLES / "hosts")])
    assert out.exit_code == 0, out.output
    drawn = _drawn(leader)
    total = len(files) + len(list((EXAMPLES / "hosts").glob("*.yaml")))
    assert "linting [" in drawn
    assert re.search(rf" \d+/{total} ", drawn), drawn  # redrawn at most 10 times a second
    assert "linting" not in out.stdout  # the bar never goes to stdout


def test_discover_of_a_folder_counts_exports(
    terminal: tuple[io.TextIOWrapper, int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stream, leader = terminal

    def at_once(items: Iterable[Any], label: str, **kw: Any) -> Iterator[Any]:
        return progress_module.progress(items, label, **{**kw, "stream": stream, "delay": 0})

    monkeypatch.setattr("nfvplace.cli.discover_many.progress", at_once)
    corpus = Path(__file__).resolve().parents[1] / "data" / "hwloc-xml"
    for name in ("16intel64-manyVFs.xml", "24em64t-2n6c2t-pci.xml"):
        (tmp_path / name).write_bytes((corpus / name).read_bytes())
    out = CliRunner().invoke(
        app, ["discover", "--hwloc-xml", str(tmp_path), "-o", str(tmp_path / "o")]
    )
    assert out.exit_code == 0, out.output
    drawn = _drawn(leader)
    assert "discovering [" in drawn
    assert re.search(r" \d+/2 ", drawn), drawn
