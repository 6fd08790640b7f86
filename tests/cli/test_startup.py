"""`nfvplace --help`: plain help (no rich at start-up) listing every command.

No timing here: the bench (`bench/bench_doors.py`) measures start-up against `python -c pass`.
"""

from __future__ import annotations

import subprocess
import sys


def test_help_lists_every_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "nfvplace", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    for command in ("lint", "discover", "place", "render", "serve", "schemas", "openapi", "show"):
        assert command in out.stdout
