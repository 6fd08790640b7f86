"""The Nova virtualenv the Nova tests run Nova's own code in (nova==34.0.0 from the package index).

Built once by `bench/nova_venv.sh` into `.bench/nova-venv` (about a minute and 390 MB), kept there
for later runs; `NFVPLACE_NOVA_PYTHON` names another one. Several pytest workers wait for the one
that builds it.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

import pytest

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
