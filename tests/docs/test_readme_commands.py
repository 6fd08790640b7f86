"""The README's table of commands names every command `nfvplace --help` lists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_table_names_every_command() -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "nfvplace", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "200"},
    ).stdout
    commands = set(re.findall(r"^  ([a-z][a-z-]+)\s{2,}", listed.split("Commands:")[1], re.M))
    assert {"place", "simulate", "capacity", "hosts"} <= commands, listed
    table = set(re.findall(r"^\| `nfvplace ([a-z-]+)", (ROOT / "README.md").read_text(), re.M))
    assert commands <= table, f"missing from the README's table: {sorted(commands - table)}"
