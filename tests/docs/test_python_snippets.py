"""Every Python snippet of the README and docs/ runs as written, from the repository's folder (in a
scratch folder that links `examples/` and `tests/`): no undefined name, no file that is not there.
A snippet that talks to `nfvplace serve` on localhost:8080 gets a real one (on a free port)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.live_serve import serve

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
# the tokens docs/service.md and the quickstarts show
TOKENS = {
    "reader": ["r-3c1f0a9e5b7d4a2c8e6f"],
    "placer": ["p-8d2b6e4f1a3c5e7b9d0f"],
    "host-agent": ["a-5e7c9b1d3f2a4c6e8b0d"],
    "admin": ["x-1a2b3c4d5e6f7a8b9c0d"],
}
SNIPPETS = [
    pytest.param(code, id=f"{page.relative_to(ROOT)}#{index}")
    for page in PAGES
    for index, code in enumerate(BLOCK.findall(page.read_text(encoding="utf-8")))
]


def test_there_are_snippets() -> None:
    assert len(SNIPPETS) >= 9


@pytest.mark.parametrize("code", SNIPPETS)
def test_every_python_snippet_runs(tmp_path: Path, code: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name in ("examples", "tests"):
        (work / name).symlink_to(ROOT / name)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    if "localhost:8080" in code:
        with serve(tmp_path, TOKENS) as url:
            _run(code.replace("http://localhost:8080", url), work, env)
    else:
        _run(code, work, env)


def _run(code: str, folder: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, f"{code}\n{done.stdout}\n{done.stderr}"
