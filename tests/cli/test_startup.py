"""Start-up stays cheap: registering every command imports none of the heavy libraries.

`nfvplace --help` (and the first step of every command) runs this registration; the commands
import the models, the engine, rich and numpy in their bodies, when they run. No timing here: the
bench (`bench/bench_doors.py`) measures start-up against `python -c pass`.
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pydantic", "rich", "numpy", "ortools", "yaml", "fastapi", "sqlalchemy")

PROBE = f"""
import sys
import nfvplace
import nfvplace.cli as cli
cli._register()
print(",".join(m for m in {HEAVY!r} if m in sys.modules))
"""


def test_registering_every_command_imports_nothing_heavy() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == ""


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


def test_render_help_names_every_format() -> None:
    from nfvplace.cli.render import FORMATS_HELP
    from nfvplace.render import FORMATS

    assert ", ".join(FORMATS) == FORMATS_HELP
