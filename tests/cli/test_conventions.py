"""Command-line conventions: -h, --version, NO_COLOR, usage errors exit 2, folders of descriptors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import nfvplace
from nfvplace.cli import _register, app

_register()
ROOT = Path(__file__).resolve().parents[2]
VM = str(ROOT / "examples" / "vms" / "cloud-vm.yaml")
BAD_VM = "schema: nfvplace/vmd/v1\nname: bad\ncpu_sets: [{id: 0, vcpus: [0, 0], memory_mib: 1GB}]\n"


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", [[], ["lint"], ["place"], ["render"], ["discover"]])
def test_dash_h_is_help(command: list[str]) -> None:
    code, out, _ = _run(*command, "-h")
    assert code == 0
    assert "Usage: nfvplace" in out


def test_version() -> None:
    code, out, _ = _run("--version")
    assert code == 0
    assert out == f"nfvplace {nfvplace.__version__}\n"


def test_no_color_is_respected(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD_VM, encoding="utf-8")
    _, coloured, _ = _run("lint", str(bad), env={"FORCE_COLOR": "1"})
    assert "31m" in coloured  # red, when colour is forced
    _, plain, _ = _run("lint", str(bad), env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "31m" not in plain
    assert "33m" not in plain
    assert "NFV101" in plain


@pytest.mark.parametrize(
    "args",
    [
        ["lint", VM, "--format", "yaml"],
        ["discover", "--format", "xml", "--hwloc-xml", VM],
        ["place", "--hosts", str(ROOT / "examples" / "fleet"), "--vm", VM, "--format", "xml"],
        ["render", "--format", "docx", VM],
    ],
    ids=["lint", "discover", "place", "render"],
)
def test_unknown_format_is_a_usage_error_everywhere(args: list[str]) -> None:
    code, out, err = _run(*args)
    assert code == 2
    assert out == ""
    assert "format" in err.lower()


def test_lint_of_an_empty_folder_says_no_descriptors_found(tmp_path: Path) -> None:
    code, out, err = _run("lint", str(tmp_path))
    assert code == 2
    assert out == ""
    assert "error [nfvplace.usage.no_descriptors]: no descriptors found in" in err


def test_lint_picks_up_xml_files_in_a_folder_and_reports_each(tmp_path: Path) -> None:
    (tmp_path / "vm.yaml").write_text(Path(VM).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "vnfd.xml").write_text("<?xml version='1.0'?>\n<vnfd/>\n", encoding="utf-8")
    code, out, _ = _run("lint", "--format", "json", str(tmp_path))
    assert code == 1
    # vm.yaml is read too: at most info findings (NFV050), the errors are the XML's
    errors = {f["file"] for f in json.loads(out) if f["severity"] == "error"}
    assert errors == {str(tmp_path / "vnfd.xml")}
    code, text, _ = _run("lint", "--no-color", str(tmp_path))
    assert "2 files checked" in text
