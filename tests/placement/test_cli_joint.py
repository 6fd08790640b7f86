"""`nfvplace place` with several --vm, --count and --mode max; exit 3 names the blocking member."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import NodeSpec, cpu_set, host, vm
from click.testing import Result
from typer.testing import CliRunner

import nfvplace
from nfvplace.cli import _register, app

_register()
runner = CliRunner()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "hosts").mkdir()
    for h in (host("a", nodes=[NodeSpec(cores=4)]), host("b", nodes=[NodeSpec(cores=4)])):
        (tmp_path / "hosts" / f"{h.id}.yaml").write_text(nfvplace.dump(h))
    (tmp_path / "two.yaml").write_text(nfvplace.dump(vm("two", [cpu_set(0, 4)])))
    (tmp_path / "one.yaml").write_text(nfvplace.dump(vm("one", [cpu_set(0, 2)])))
    return tmp_path


def _place(files: Path, *args: str) -> Result:
    return runner.invoke(app, ["place", "--hosts", str(files / "hosts"), *args])


def test_batch_of_several_vms_with_count(files: Path) -> None:
    out = _place(
        files,
        "--vm",
        str(files / "two.yaml"),
        "--vm",
        str(files / "one.yaml"),
        "--count",
        "2",
        "--format",
        "json",
    )
    assert out.exit_code == 0, out.output
    configs = json.loads(out.stdout)["configurations"]  # one vm-configurations document
    assert sorted(c["vm"] for c in configs) == ["one", "one", "two", "two"]


def test_batch_that_does_not_fit_exits_3_naming_the_member(files: Path) -> None:
    out = _place(files, "--vm", str(files / "two.yaml"), "--count", "5")
    assert out.exit_code == 3
    assert "batch: member two instance 5/5 does not fit" in out.stderr


def test_mode_max_places_what_fits_and_lists_the_rest(files: Path) -> None:
    out = _place(
        files, "--vm", str(files / "two.yaml"), "--count", "5", "--mode", "max", "--format", "json"
    )
    assert out.exit_code == 0, out.output
    assert len(json.loads(out.stdout)["configurations"]) == 4
    assert "not placed: two instance 5: 0/2 hosts fit" in out.stderr


def test_template_in_a_batch_is_refused(files: Path, tmp_path: Path) -> None:
    template = {
        "schema": "nfvplace/vnf/v1",
        "name": "t",
        "members": [{"name": "x", "descriptor": vm("x").model_dump(by_alias=True)}],
    }
    (tmp_path / "t.json").write_text(json.dumps(template))
    out = _place(files, "--vm", str(tmp_path / "t.json"), "--vm", str(files / "one.yaml"))
    assert out.exit_code == 1
    assert "placed on its own" in out.stderr
