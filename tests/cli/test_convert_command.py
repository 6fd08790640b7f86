"""`nfvplace convert` end to end: document on stdout, findings on stderr, exit 0/1/2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from nfvplace.cli import _register, app

_register()
DATA = Path(__file__).resolve().parents[1] / "data" / "dialects"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_dialect_to_nfvplace_yaml(runner: CliRunner) -> None:
    result = runner.invoke(app, ["convert", str(DATA / "osm-im" / "ref22_vnfd.yaml")])
    assert result.exit_code == 0
    document = yaml.safe_load(result.stdout)
    assert document["schema"] == "nfvplace/vmd/v1"
    assert "read as osm-sol006" in result.stderr
    assert "[assumed]" in result.stderr


@pytest.mark.parametrize(
    ("args", "code", "stderr"),
    [
        (["openstack/hot_tosca_sriov.yaml"], 0, "[missing]"),
        (["openstack/hot_tosca_sriov.yaml", "--strict"], 1, "error [missing]"),
        (["tosca-nfv/tosca_flavor_with_wrong_cpu.yaml"], 1, "'shared', 'dedicated'"),
        (["openvim/2Th_2G.yaml", "--to", "vmware"], 2, "--to 'vmware'"),
        (["openvim/2Th_2G.yaml", "--format", "toml"], 2, "--format 'toml'"),
        (["does-not-exist.yaml"], 2, "cannot read"),
    ],
)
def test_exit_codes(runner: CliRunner, args: list[str], code: int, stderr: str) -> None:
    result = runner.invoke(app, ["convert", str(DATA / args[0]), *args[1:]])
    assert result.exit_code == code, result.stderr
    assert stderr in result.stderr


def test_to_nova_json_then_back(runner: CliRunner, tmp_path: Path) -> None:
    source = DATA / "openvim" / "2Th_2G.yaml"
    nova = runner.invoke(app, ["convert", str(source), "--to", "nova", "--format", "json"])
    assert nova.exit_code == 0
    flavor = json.loads(nova.stdout)["flavor"]
    assert flavor["extra_specs"]["hw:cpu_policy"] == "dedicated"
    (tmp_path / "f.json").write_text(nova.stdout)
    back = runner.invoke(app, ["convert", str(tmp_path / "f.json")])
    assert back.exit_code == 0
    assert yaml.safe_load(back.stdout)["cpu_sets"][0]["vcpus"] == [0, 1]


def test_a_descriptor_lint_refuses_exits_1_with_lints_reason(runner: CliRunner) -> None:
    path = DATA.parent / "descriptors" / "vcpus-contradict-cpu-sets.json"  # NFV105
    result = runner.invoke(app, ["convert", str(path), "--to", "nova"])
    assert result.exit_code == 1, result.output
    assert "NFV105" in result.stderr
    assert result.stdout == ""
