"""The one progress bar of the command line.

    for path in progress(paths, "loading hosts"):
        ...

    with Progress("placing", total=len(vms)) as bar:
        for vm in vms:
            ...
            bar.advance()

Rules, the same for every command:

- it draws on **stderr only**, never on stdout, so piped output stays clean;
- it draws only when stderr is a terminal, and only once the work has taken longer than `delay`
  (1 s): quick commands, pipes, CI logs and files never see it;
- it draws nothing when `quiet=True` (a command's `--quiet`), when the environment sets
  `NFVPLACE_NO_PROGRESS` (any non-empty value) or `TERM=dumb`;
- it is plain text (no colour, so `NO_COLOR` has nothing to remove), redrawn at most ten times a
  second on one line, and the line is wiped when the work ends, whether it succeeds or fails.

It imports nothing heavy, so a command can use it without slowing its start-up.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator, Sized
from types import TracebackType
from typing import IO

DELAY_S = 1.0
"""Work that ends sooner than this never shows a bar."""

REDRAW_S = 0.1
WIDTH = 24


def enabled(stream: IO[str], quiet: bool = False) -> bool:
    """Whether a bar may be drawn on `stream`: a terminal, not quiet, not switched off."""
    if quiet or os.environ.get("NFVPLACE_NO_PROGRESS") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real stream
        return False


class Progress:
    """A progress bar for `total` steps (or an unknown number) of the work called `label`."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        stream: IO[str] | None = None,
        quiet: bool = False,
        delay: float = DELAY_S,
    ) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr
        self._on = enabled(self._stream, quiet)
        self._delay = delay
        self._start = time.monotonic()
        self._last_draw = -REDRAW_S
        self._drawn_width = 0

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def advance(self, steps: int = 1) -> None:
        """Count `steps` more steps done; redraw when it is time to."""
        self.done += steps
        if not self._on:
            return
        now = time.monotonic()
        if now - self._start < self._delay or now - self._last_draw < REDRAW_S:
            return
        self._last_draw = now
        self._draw(self.line(now - self._start))

    def line(self, elapsed: float) -> str:
        """The text of the bar, e.g. `loading hosts [#########...] 412/1000 3.1 s`."""
        if self.total:
            filled = min(WIDTH, WIDTH * self.done // self.total)
            bar = "#" * filled + "." * (WIDTH - filled)
            return f"{self.label} [{bar}] {self.done}/{self.total} {elapsed:.1f} s"
        return f"{self.label} {self.done} {elapsed:.1f} s"

    def close(self) -> None:
        """Wipe the bar's line, if one was drawn."""
        if self._drawn_width:
            self._stream.write("\r" + " " * self._drawn_width + "\r")
            self._stream.flush()
            self._drawn_width = 0

    def _draw(self, text: str) -> None:
        pad = max(0, self._drawn_width - len(text))
        self._stream.write("\r" + text + " " * pad)
        self._stream.flush()
        self._drawn_width = max(self._drawn_width, len(text))


def progress[T](
    items: Iterable[T],
    label: str,
    *,
    total: int | None = None,
    stream: IO[str] | None = None,
    quiet: bool = False,
    delay: float = DELAY_S,
) -> Iterator[T]:
    """Yield `items` unchanged, showing a bar on a terminal's stderr if they take over `delay`."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    with Progress(label, total, stream=stream, quiet=quiet, delay=delay) as bar:
        for item in items:
            yield item
            bar.advance()


__all__ = ["DELAY_S", "Progress", "enabled", "progress"]
