"""libpq's protocol trace of one PostgreSQL connection, for tests that count round trips."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Trace:
    text: str = ""

    def round_trips(self) -> int:
        """Each `Sync` (extended protocol) or `Query` (simple) the client sent: the client waits
        for the server's answer to each."""
        lines = [line.split("\t") for line in self.text.splitlines()]
        sent = [parts[3] for parts in lines if len(parts) > 3 and parts[1] == "F"]
        return sum(1 for message in sent if message in ("Sync", "Query"))


@contextlib.contextmanager
def traced(raw: Any) -> Iterator[Trace]:
    """The messages `raw` (a psycopg connection) sends and receives inside the block."""
    found = Trace()
    with tempfile.TemporaryFile("w+") as file:
        raw.pgconn.trace(file.fileno())
        try:
            yield found
        finally:
            raw.pgconn.untrace()
            file.seek(0)
            found.text = file.read()
