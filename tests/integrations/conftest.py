"""The Nova virtualenv the Nova tests run Nova's own code in (nova==34.0.0 from the package index).

Built once by `bench/nova_venv.sh` into `.bench/nova-venv` (about a minute and 390 MB), kept there
for later runs; `NFVPLACE_NOVA_PYTHON` names another one. Several pytest workers wait for the one
that builds it.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live_serve import serve

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def nova_python() -> str:
    given = os.environ.get("NFVPLACE_NOVA_PYTHON")
    if given:
        return given
    venv = ROOT / ".bench" / "nova-venv"
    venv.parent.mkdir(exist_ok=True)
    with (venv.parent / "nova-venv.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            ["bash", str(ROOT / "bench" / "nova_venv.sh")],
            capture_output=True,
            text=True,
            check=False,
        )
    assert done.returncode == 0, f"bench/nova_venv.sh failed:\n{done.stderr[-3000:]}"
    os.environ["NFVPLACE_NOVA_PYTHON"] = str(venv / "bin" / "python")
    return str(venv / "bin" / "python")


@pytest.fixture(scope="module")
def live_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A real `nfvplace serve` and a file holding a reader token (what nova.conf's `[nfvplace]
    token_file` names)."""
    folder = tmp_path_factory.mktemp("nfvplace-serve")
    token_file = folder / "nova.token"
    token_file.write_text("nova-scheduler-token-0123456789\n")
    with serve(folder, {"reader": ["nova-scheduler-token-0123456789"]}) as url:
        yield url, token_file
