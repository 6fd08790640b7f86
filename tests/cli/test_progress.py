"""The CLI's one progress bar: stderr only, terminals only, only for slow work."""

from __future__ import annotations

import io
import os
import pty
from collections.abc import Iterator

import pytest

from nfvplace.cli.progress import Progress, progress


@pytest.fixture
def terminal() -> Iterator[tuple[io.TextIOWrapper, int]]:
    """A pseudo-terminal: the file a program writes to, and the fd that reads what it wrote."""
    leader, follower = pty.openpty()
    stream = open(follower, "w", encoding="utf-8", closefd=True)  # noqa: SIM115
    try:
        yield stream, leader
    finally:
        stream.close()
        os.close(leader)


def read_all(fd: int, settle_s: float = 0.2) -> str:
    """Everything written to the terminal so far: read until it stays quiet for `settle_s` (one
    read may return only part of it on a busy machine)."""
    import select

    out = b""
    while select.select([fd], [], [], settle_s)[0]:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        out += chunk
    return out.decode()


def test_draws_on_a_terminal_stderr_and_nothing_on_stdout(
    terminal: tuple[io.TextIOWrapper, int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stream, leader = terminal
    monkeypatch.delenv("NFVPLACE_NO_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr("sys.stderr", stream)
    items = list(progress(["a", "b", "c"], "loading hosts", delay=0))
    assert items == ["a", "b", "c"]
    drawn = read_all(leader)
    assert "loading hosts [" in drawn
    assert "1/3" in drawn
    assert drawn.endswith("\r")  # the line is wiped at the end
    assert capsys.readouterr().out == ""


def test_quick_work_shows_nothing(
    terminal: tuple[io.TextIOWrapper, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    stream, leader = terminal
    monkeypatch.setenv("TERM", "xterm")
    with Progress("loading", 10, stream=stream) as bar:  # default delay: 1 s
        bar.advance(10)
    stream.write("end")
    stream.flush()
    assert read_all(leader) == "end"


@pytest.mark.parametrize(
    ("quiet", "env"),
    [(True, {}), (False, {"NFVPLACE_NO_PROGRESS": "1"}), (False, {"TERM": "dumb"})],
)
def test_switched_off(
    terminal: tuple[io.TextIOWrapper, int],
    monkeypatch: pytest.MonkeyPatch,
    quiet: bool,
    env: dict[str, str],
) -> None:
    stream, leader = terminal
    monkeypatch.setenv("TERM", "xterm")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert list(progress(range(3), "x", stream=stream, quiet=quiet, delay=0)) == [0, 1, 2]
    stream.write("end")
    stream.flush()
    assert read_all(leader) == "end"


def test_not_a_terminal_shows_nothing() -> None:
    stream = io.StringIO()
    assert list(progress(iter(range(3)), "x", stream=stream, delay=0)) == [0, 1, 2]
    assert stream.getvalue() == ""


def test_unknown_total_counts() -> None:
    assert Progress("reading", None).line(2.0) == "reading 0 2.0 s"
    bar = Progress("reading", 4)
    bar.advance(2)
    assert bar.line(0.5) == "reading [############............] 2/4 0.5 s"
