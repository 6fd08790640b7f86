"""A VNF template's member files must lie in its folder: a path outside it (`../../../../etc/passwd`,
`/etc/hostname`, a link out of the folder) is refused unopened, naming the file, the field and the
fix, through every door that reads files (lint, place, convert; the library's load, convert and
lint). The REST doors never read files (tests/service/test_service_member_files.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import nfvplace
from nfvplace import errors
from nfvplace.errors import DescriptorError, NfvplaceError
from nfvplace.lint import lint_paths

ROOT = Path(__file__).resolve().parents[2]
SECRET_FILE_TEXT = "root:SECRET-LINE:0:0"


def _template(folder: Path, file: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "vnf.yaml"
    path.write_text(
        yaml.safe_dump(
            {"schema": "nfvplace/vnf/v1", "name": "t", "members": [{"name": "du", "file": file}]}
        )
    )
    return path


def _outside(tmp_path: Path, how: str) -> Path:
    """A template whose member lies outside its folder, `how`: through `..`, absolute, a link."""
    secret = tmp_path / "secret.yaml"
    secret.write_text(SECRET_FILE_TEXT + "\n")
    folder = tmp_path / "a" / "b"
    if how == "dotdot":
        return _template(folder, "../../secret.yaml")
    if how == "absolute":
        return _template(folder, str(secret))
    folder.mkdir(parents=True)
    (folder / "link.yaml").symlink_to(secret)
    return _template(folder, "link.yaml")


HOW = ["dotdot", "absolute", "link"]


def _said(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize(
    "command",
    [
        ["lint"],
        ["place", "--hosts", str(ROOT / "examples" / "hosts"), "--vm"],
        ["convert"],
    ],
)
def test_every_command_refuses_a_member_outside_the_folder(
    tmp_path: Path, how: str, command: list[str]
) -> None:
    template = _outside(tmp_path, how)
    done = subprocess.run(
        [sys.executable, "-m", "nfvplace", *command, str(template)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, _said(done)
    assert "outside the template's folder" in _said(done)
    assert "members[0].file" in _said(done)
    assert "members/du.yaml" in _said(done)  # the fix
    assert "nfvplace.input.reference" in _said(done)
    assert "SECRET" not in _said(done)


@pytest.mark.parametrize("how", HOW)
def test_the_library_refuses_a_member_outside_the_folder(tmp_path: Path, how: str) -> None:
    template = _outside(tmp_path, how)
    for read in (nfvplace.load, nfvplace.convert):
        with pytest.raises(DescriptorError) as refused:
            read(template)
        assert refused.value.code == errors.INPUT_REFERENCE
        assert "outside the template's folder" in str(refused.value)
        assert "SECRET" not in str(refused.value)
    (finding,) = [f for f in lint_paths([template]).files[0].findings if f.severity == "error"]
    assert finding.rule == "NFV710"
    assert finding.path == "members[0].file"


def test_a_member_below_the_folder_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "vnf"
    (folder / "members").mkdir(parents=True)
    (folder / "members" / "du.yaml").write_text((ROOT / "examples/vms/cloud-vm.yaml").read_text())
    loaded = nfvplace.load(_template(folder, "members/./du.yaml"))
    assert not isinstance(loaded, list)
    assert isinstance(loaded, nfvplace.VnfTemplate)
    assert loaded.members[0].descriptor is not None


def test_the_bundled_template_keeps_its_members_in_its_folder() -> None:
    try:
        nfvplace.load(ROOT / "examples" / "vnf" / "ran-site.yaml")
    except NfvplaceError as exc:  # pragma: no cover - the failure says why
        pytest.fail(str(exc))
