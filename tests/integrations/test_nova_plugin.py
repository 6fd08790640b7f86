"""The `nfvplace-nova` distribution (scripts/build_nova_plugin.py): the plug-ins alone, standard
library only, `Requires-Python >= 3.10`, no console script; installed into a Python 3.11 virtualenv
with Nova 34 and run there by Nova's own filter handler against a real `nfvplace serve`."""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from bench import nova_cases

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location(
    "build_nova_plugin", ROOT / "scripts/build_nova_plugin.py"
)
assert _SPEC is not None
assert _SPEC.loader is not None
build_nova_plugin = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(build_nova_plugin)


def _python_311() -> str:
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.11*/bin/python3")))
    for candidate in ("/usr/bin/python3.11", *found):
        if os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("Python 3.11 is needed (pyenv install 3.11, or the distribution's python3.11)")


def test_the_wheel_holds_the_plugins_alone(tmp_path: Path) -> None:
    wheel = build_nova_plugin.build(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert {n.split("/")[0] for n in names} == {"nfvplace", "nfvplace_nova-0.1.0.dist-info"}
    assert "nfvplace/integrations/nova/scheduler.py" in names
    assert not [n for n in names if n.endswith("entry_points.txt")]
    assert "Requires-Python: >=3.10" in metadata
    assert "Requires-Dist" not in metadata


def test_the_plugin_runs_in_a_python_311_nova(
    tmp_path: Path, live_service: tuple[str, Path]
) -> None:
    venv = ROOT / ".bench" / "nova-venv-3.11"
    built = subprocess.run(
        ["bash", str(ROOT / "bench" / "nova_venv.sh")],
        env={**os.environ, "NOVA_VENV": str(venv), "NOVA_PYTHON": _python_311()},
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    python = str(venv / "bin" / "python")
    wheel = build_nova_plugin.build(tmp_path / "dist")
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
        check=True,
    )
    assert not (venv / "bin" / "nfvplace").exists()
    # the probe's helpers alone on the path: nfvplace comes from the installed wheel
    (tmp_path / "bench").symlink_to(ROOT / "bench")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    where = subprocess.run(
        [
            python,
            "-c",
            "import nfvplace.integrations.nova as m, sys; print(m.__file__, sys.version)",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(venv))
    assert " 3.11." in where
    url, token_file = live_service
    data = nova_cases.cases(seed=5, flavors=3, hosts_per_flavor=4)
    small = {"hw:cpu_policy": "dedicated"}  # fits most generated hosts
    data["cases"][0]["flavor"] |= {"vcpus": 1, "ram": 512, "extra_specs": small}
    data.update(url=url, token_file=str(token_file))
    done = subprocess.run(
        [python, str(tmp_path / "bench" / "nova_scheduler_probe.py")],
        input=json.dumps(data),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)["results"]
    logs = [line for r in results for line in r.get("log", ())]
    assert results[0]["nfvplace"], logs
    assert set(results[0]["nfvplace"]) <= set(results[0]["nova"])
    assert not [line for line in logs if line.startswith("WARNING")], logs
