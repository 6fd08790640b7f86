"""Start-up stays cheap: `nfvplace --help` and `nfvplace lint FILE` (run once per file by pre-commit
hooks) import neither the engine nor the renderers nor the dialects, and the names the commands spell
out for their help stay equal to the library's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import nfvplace.conversion
import nfvplace.render
from nfvplace.cli import convert as cli_convert
from nfvplace.cli import render as cli_render
from nfvplace.dialects import DIALECT_NAMES, DIALECTS

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("ortools", "pandas", "numpy", "rich", "lxml", "nfvplace.placement", "nfvplace.render")
PROBE = """
import json, sys
sys.argv = ["nfvplace", *json.loads(sys.argv[1])]
from nfvplace.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _modules_after(*argv: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "argv",
    [("--help",), ("place", "--help"), ("lint", "examples/vms/vran-du.yaml")],
    ids=["help", "place-help", "lint-file"],
)
def test_start_up_imports_nothing_heavy(argv: tuple[str, ...]) -> None:
    loaded = _modules_after(*argv)
    heavy = sorted(m for m in loaded if m.startswith(HEAVY))
    assert heavy == []
    dialect_modules = {f"nfvplace.dialects.{m.__name__.rsplit('.', 1)[1]}" for m in DIALECTS}
    assert not loaded & dialect_modules


def test_help_does_not_build_the_models() -> None:
    assert not {m for m in _modules_after("--help") if m.startswith("nfvplace.models")}


def test_names_spelled_out_for_help_match_the_library() -> None:
    assert cli_render.FORMATS == nfvplace.render.FORMATS
    assert cli_convert.ALL_TARGETS == nfvplace.conversion.ALL_TARGETS
    assert cli_convert.FORMATS == nfvplace.conversion.FORMATS
    assert tuple(str(m.NAME) for m in DIALECTS) == DIALECT_NAMES
