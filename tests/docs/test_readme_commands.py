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


def test_the_notebook_extra_installs_what_the_docs_open_it_with() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(d.startswith("jupyterlab") for d in extras["notebook"])
    guide = (ROOT / "docs" / "quickstart" / "researcher.md").read_text()
    assert "pip install -e '.[notebook]'" in guide
    assert "jupyter lab examples/notebooks/" in guide
