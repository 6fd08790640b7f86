"""scripts/system-packages.sh (run by scripts/setup.sh): it lists every missing system package with
why, installs them one at a time and says so, and installs nothing with NFVPLACE_SYSTEM_PACKAGES=0
or --no-system-packages. Run with a PATH holding a fake `apt-get` (which logs what it is asked)
and a fake `id` (root), so that the commands it probes for are missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMAND_PROBED = ["libvirt-clients", "libxml2-utils", "chromium", "chromium-driver", "wrk"]


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").write_text("#!/bin/sh\necho 0\n")
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "apt.log"}\n')
    for tool in ("date", "grep", "sleep"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    for script in bin_dir.iterdir():
        script.chmod(0o755)
    return bin_dir


def _run(bin_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run(
        [bash, str(ROOT / "scripts" / "system-packages.sh"), *args],
        env={"PATH": str(bin_dir), **env},
        stdin=subprocess.DEVNULL,  # no terminal: no question
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_missing_packages_are_listed_with_why_and_installed_one_by_one(fake_bin: Path) -> None:
    done = _run(fake_bin)
    assert done.returncode == 0, done.stderr
    for package in COMMAND_PROBED:
        assert f"    {package}: " in done.stdout, done.stdout
    assert "browser test" in done.stdout
    log = (fake_bin.parent / "apt.log").read_text().splitlines()
    assert log[0].endswith("update -qq")
    installed = [line.split()[-1] for line in log[1:]]
    assert set(COMMAND_PROBED) <= set(installed)
    assert f"installing wrk ({installed.index('wrk') + 1} of {len(installed)})" in done.stdout
    assert "NFVPLACE_SYSTEM_PACKAGES=0" in done.stdout  # the opt-out is named before it starts


@pytest.mark.parametrize(
    ("args", "env"),
    [((), {"NFVPLACE_SYSTEM_PACKAGES": "0"}), (("--no-system-packages",), {})],
)
def test_the_opt_out_installs_nothing(
    fake_bin: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    done = _run(fake_bin, *args, **env)
    assert done.returncode == 0, done.stderr
    assert "chromium: " in done.stdout
    assert "skipped" in done.stdout
    assert not (fake_bin.parent / "apt.log").exists()


def test_an_unknown_option_is_refused(fake_bin: Path) -> None:
    done = _run(fake_bin, "--bogus")
    assert done.returncode == 2
    assert "--help" in done.stderr
