"""A plain `pip install nfvplace` (no extras, no dev tools) runs every command of the README and of
the docs' quick starts, as written, or answers the one-line error that names the extra it needs.

The virtualenv is built once per set of dependencies (pyproject.toml's, hashed) and kept in the
user's cache (`~/.cache/nfvplace-tests/`): the first run installs the dependencies from the index
(about a minute), later runs only install this tree's wheel into it (built here, `--no-deps`). The
commands run in a scratch folder holding a copy of `examples/`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real servers and processes: not in the quick subset

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs" / "quickstart").glob("*.md"))]
NOT_RUN = {  # documented commands this test does not run, and why
    "bash scripts/setup.sh": "sets up the development venv; this test is the plain install",
    "bash scripts/test.sh": "the test command itself",
    "NFVPLACE_TEST_POSTGRES_URL=postgresql://nfv:secret@localhost:5432/postgres "
    "bash scripts/test.sh": "the test command itself, against a PostgreSQL server of yours",
    "pip wheel --no-deps -w wheels/ path/to/nfvplace": "what the fixture does (this tree's wheel)",
    "pip install wheels/nfvplace-0.1.0-py3-none-any.whl": "what the fixture does",
    "pip install tools/nfvplace-0.1.0-py3-none-any.whl": "what the fixture does (in CI)",
    "nfvplace serve --tokens tokens.yaml --db postgresql://nfv@db/nfvplace --workers 4 "
    "--host 0.0.0.0": "needs the PostgreSQL server `db` of the example",
    ".venv/bin/pip install -e '.[notebook]'": "installs JupyterLab into the development venv",
    ".venv/bin/jupyter lab examples/notebooks/placement-tour.ipynb": "interactive (the notebook "
    "runs in tests/test_notebooks.py)",
}
ANSWERS = re.compile(r'^\{"(id|dry_run|type)"')  # a JSON answer of the service, printed by curl


def documented_commands() -> list[str]:
    """Every shell command of the README's and the quick starts' console and sh blocks."""
    commands: list[str] = []
    for doc in DOCS:
        for lang, block in re.findall(r"```(console|sh|bash)\n(.*?)```", doc.read_text(), re.S):
            text = re.sub(r"\\\n\s*", "", block)  # continued lines joined
            for line in text.splitlines():
                if lang == "console" and not line.startswith("$ "):
                    continue  # output shown after a command
                line = re.sub(r"\s+#.*$", "", line.removeprefix("$ ")).strip()
                if line and not line.startswith("#"):
                    commands.extend(part.strip() for part in line.split(" && "))
    return commands


def documented_python() -> list[str]:
    blocks = []
    for doc in DOCS:
        blocks.extend(re.findall(r"```python\n(.*?)```", doc.read_text(), re.S))
    return blocks


@pytest.fixture(scope="session")
def plain_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a venv holding `pip install nfvplace-<this tree>.whl` and nothing else."""
    pyproject = (ROOT / "pyproject.toml").read_bytes()
    key = hashlib.sha256(pyproject + sys.version.encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "nfvplace-tests"
    cache.mkdir(parents=True, exist_ok=True)
    venv = cache / f"plain-{key}"
    wheels = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
    )
    wheel = next(wheels.glob("nfvplace-*.whl"))
    with _locked(cache / "lock"):  # xdist workers and parallel runs share the cache
        if not (venv / "complete").exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            _pip(venv, str(wheel))  # the dependencies, as `pip install nfvplace` takes them
            (venv / "complete").write_text(wheel.name)
        # this tree, installed once: reinstalling it while another xdist worker runs the venv's
        # `nfvplace` took the command away from under that worker ("command not found")
        contents = _contents(wheel)
        if (venv / "installed").exists() and (venv / "installed").read_text() == contents:
            return venv / "bin"
        _pip(venv, "--no-deps", "--force-reinstall", str(wheel))
        (venv / "installed").write_text(contents)
    return venv / "bin"


def _contents(wheel: Path) -> str:
    """A hash of what a wheel installs: its files' names and bytes (not the zip's timestamps,
    which differ between two builds of the same tree)."""
    digest = hashlib.sha256()
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            digest.update(name.encode() + b"\0" + archive.read(name))
    return digest.hexdigest()


def _pip(venv: Path, *args: str) -> None:
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args],
        check=True,
        capture_output=True,
        timeout=900,
    )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def test_the_plain_install_has_no_extras(plain_venv: Path) -> None:
    script = "import importlib.util as u; print([m for m in ('matplotlib', 'cairosvg', "
    script += "'pytest', 'httpx') if u.find_spec(m)])"
    found = subprocess.run([str(plain_venv / "python"), "-c", script], capture_output=True)
    assert found.stdout.decode().strip() == "[]"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Shell:
    """Runs documented commands in a scratch folder with the plain venv first on the PATH."""

    def __init__(self, bin_dir: Path, folder: Path) -> None:
        self.folder = folder
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "XDG_DATA_HOME": str(folder / "data"),  # serve's default SQLite file goes here
            "NO_COLOR": "1",
        }
        self.env.pop("VIRTUAL_ENV", None)
        self.port = free_port()
        self.server: subprocess.Popen[bytes] | None = None

    def command(self, line: str) -> str:
        """`line` as it will run: the project venv's prefix dropped, our port for 8080."""
        return line.replace(".venv/bin/", "").replace("8080", str(self.port))

    def run(self, line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", self.command(line)],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def start(self, line: str) -> None:
        self.server = subprocess.Popen(
            ["bash", "-c", "exec " + self.command(line)],
            cwd=self.folder,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.server.poll() is None, self.server.stderr.read()  # type: ignore[union-attr]
            ready = self.run(f"curl -sf http://127.0.0.1:{self.port}/readyz")
            if ready.returncode == 0:
                return
            time.sleep(0.2)
        raise AssertionError("the documented server did not start")

    def stop(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=30)


def prepare(folder: Path) -> None:
    """The files the quick starts' prose has the reader bring: examples/, a VM of the vendor's
    own (descriptors/du.yaml), a lab host it fits (lab/compute-01.yaml), and the researcher's
    placement of the DU on the Dell host (du-config.yaml, as `nfvplace place` writes it)."""
    examples = ROOT / "examples"
    shutil.copytree(examples, folder / "examples")
    (folder / "descriptors").mkdir()
    shutil.copy(examples / "vms" / "vran-du.yaml", folder / "descriptors" / "du.yaml")
    (folder / "lab").mkdir()
    shutil.copy(examples / "fleet" / "compute-08.yaml", folder / "lab" / "compute-01.yaml")
    dell = examples / "hosts" / "dell-r740-2s-gold-6230-snc2.yaml"
    du = examples / "vms" / "vran-du.yaml"
    placed = subprocess.run(
        [sys.executable, "-m", "nfvplace", "place", "--vm", str(du), "--hosts", str(dell)],
        capture_output=True,
        check=True,
    )
    (folder / "du-config.yaml").write_bytes(placed.stdout)


def expect(line: str, result: subprocess.CompletedProcess[str]) -> None:
    """What a documented command must do in a plain install: succeed, answer as the service
    does, or refuse with the one-line error naming the extra it needs."""
    out = result.stdout.strip()
    if "nfvplace[png]" in result.stderr or "nfvplace[plot]" in result.stderr:
        assert result.returncode != 0
        (line,) = result.stderr.strip().splitlines()  # one line
        assert line.startswith("error [nfvplace.usage.missing_extra]: "), line
        return
    if line.startswith("nfvplace place"):  # 3: nothing fits, explained on stderr
        assert result.returncode in (0, 3), result.stderr
        return
    assert result.returncode == 0, f"{line}\n{result.stderr}"
    if line.startswith("curl") and out:
        assert ANSWERS.match(out), out[:300]


def test_every_documented_command_runs_in_a_plain_install(plain_venv: Path, tmp_path: Path) -> None:
    commands = documented_commands()
    assert len(commands) >= 15, commands
    prepare(tmp_path)
    (tmp_path / "tokens.yaml").write_text(
        "reader:     [r-3c1f0a9e5b7d4a2c8e6f]\nplacer:     [p-8d2b6e4f1a3c5e7b9d0f]\n"
        "host-agent: [a-5e7c9b1d3f2a4c6e8b0d]\nadmin:      [x-1a2b3c4d5e6f7a8b9c0d]\n"
    )
    shell = Shell(plain_venv, tmp_path)
    placed: list[str] = []
    try:
        for line in commands:
            if line in NOT_RUN:
                continue
            if line.startswith("nfvplace serve"):
                shell.start(line)
                continue
            if "pl-1f0c…" in line:  # the placement the POST above made (none if 409)
                line = line.replace("pl-1f0c…", placed[-1] if placed else "pl-none")
            result = shell.run(line)
            expect(line, result)
            placed.extend(re.findall(r'"id":\s*"(pl-[0-9a-f]+)"', result.stdout))
        for code in documented_python():  # the ones that talk to the documented server
            if "localhost:8080" in code:
                ran = python(plain_venv, shell.command(code), tmp_path)
                assert ran.returncode == 0, f"{code}\n{ran.stderr}"
    finally:
        shell.stop()


def python(bin_dir: Path, code: str, folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / "python"), "-c", code], cwd=folder, capture_output=True, text=True
    )


def test_every_documented_python_snippet_runs(plain_venv: Path, tmp_path: Path) -> None:
    prepare(tmp_path)
    snippets = [code for code in documented_python() if "localhost:8080" not in code]
    assert len(snippets) >= 2
    for code in snippets:
        result = python(plain_venv, code, tmp_path)
        assert result.returncode == 0, f"{code}\n{result.stderr}"


def test_simulate_names_the_extra_its_plots_need(plain_venv: Path, tmp_path: Path) -> None:
    """`nfvplace simulate` (docs/simulation.md) draws with matplotlib, the `plot` extra: in a
    plain install it says so in one line, before it replays anything."""
    prepare(tmp_path)
    shell = Shell(plain_venv, tmp_path)
    result = shell.run(
        "nfvplace simulate --hosts examples/fleet --vm examples/vms/cloud-vm.yaml --events 50"
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error [nfvplace.usage.missing_extra]: the plots need matplotlib, which is not "
        "installed: pip install 'nfvplace[plot]'"
    )
    assert not (tmp_path / "simulation").exists()
