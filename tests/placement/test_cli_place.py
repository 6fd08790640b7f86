"""`nfvplace place`: exit codes 0 (placed), 3 (no fit, reasons printed), 1 (invalid input)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest
from builders import cpu_set, host, vm
from typer.testing import CliRunner

import nfvplace
from nfvplace.cli import _register, app

_register()
runner = CliRunner()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "hosts").mkdir()
    for h in (host("a"), host("b", used={0: "x", 8: "x"})):
        (tmp_path / "hosts" / f"{h.id}.yaml").write_text(nfvplace.dump(h))
    (tmp_path / "vm.yaml").write_text(nfvplace.dump(vm("dp", [cpu_set(0, 4, hugepages_1g=2)])))
    (tmp_path / "big.yaml").write_text(nfvplace.dump(vm("big", [cpu_set(0, 12)])))
    return tmp_path


def test_places_and_prints_the_configuration(files: Path) -> None:
    out = runner.invoke(
        app, ["place", "--hosts", str(files / "hosts"), "--vm", str(files / "vm.yaml")]
    )
    assert out.exit_code == 0, out.output
    config = nfvplace.models.parse_text(out.stdout)
    assert nfvplace.models.parse_document(config).host == "b"  # type: ignore[union-attr]


def test_json_and_explain(files: Path) -> None:
    out = runner.invoke(
        app,
        [
            "place",
            "--hosts",
            str(files / "hosts" / "a.yaml"),
            str(files / "hosts" / "b.yaml"),
            "--vm",
            str(files / "vm.yaml"),
            "--format",
            "json",
            "--explain",
            "--policy",
            "spread",
        ],
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["host"] == "a"
    assert "# placed: dp on a (policy spread" in out.stderr


def test_no_fit_exits_3_with_reasons(files: Path) -> None:
    out = runner.invoke(
        app, ["place", "--hosts", str(files / "hosts"), "--vm", str(files / "big.yaml")]
    )
    assert out.exit_code == 3
    assert out.stdout == ""  # diagnostics go to stderr
    assert "0/2 hosts fit: 2 have no NUMA node with 6 free core pairs" in out.stderr
    assert "a: [core_pairs] cpu-set 0 needs 6 free core pairs" in out.stderr


def test_invalid_input_exits_1_with_code_and_file(files: Path) -> None:
    bad = files / "bad.yaml"
    bad.write_text("schema: nfvplace/vmd/v1\nname: x\ncpu_sets: [{id: 0, vcpus: []}]\n")
    out = runner.invoke(app, ["place", "--hosts", str(files / "hosts"), "--vm", str(bad)])
    assert out.exit_code == 1
    assert "nfvplace.input.invalid" in out.stderr
    assert "bad.yaml" in out.stderr
    assert "cpu_sets[0].vcpus" in out.stderr


def test_vm_file_that_is_a_host(files: Path) -> None:
    out = runner.invoke(
        app, ["place", "--hosts", str(files / "hosts"), "--vm", str(files / "hosts" / "a.yaml")]
    )
    assert out.exit_code == 1
    assert "nfvplace.input.unknown_kind" in out.stderr


def test_unknown_policy_is_a_usage_error(files: Path) -> None:
    # an option value outside its vocabulary is a usage error (exit 2), like an unknown --format
    out = runner.invoke(
        app,
        ["place", "--hosts", str(files / "hosts"), "--vm", str(files / "vm.yaml"), "--policy", "x"],
    )
    assert out.exit_code == 2
    assert "nfvplace.placement.invalid_policy" in out.stderr


def test_libvirt_format_prints_a_domain_with_the_placed_pins(files: Path) -> None:
    (files / "paired.yaml").write_text(
        nfvplace.dump(vm("paired", [cpu_set(0, 4, pairs=True, hugepages_1g=2)]))
    )
    args = ["place", "--hosts", str(files / "hosts"), "--vm", str(files / "paired.yaml")]
    placed = runner.invoke(app, args)
    assert placed.exit_code == 0, placed.output
    config = nfvplace.models.parse_document(nfvplace.models.parse_text(placed.stdout))
    out = runner.invoke(app, [*args, "--format", "libvirt"])
    assert out.exit_code == 0, out.output
    domain = ElementTree.fromstring(out.stdout)
    assert domain.tag == "domain"
    pins = {int(p.get("vcpu", -1)): int(p.get("cpuset", -1)) for p in domain.iter("vcpupin")}
    assert isinstance(config, nfvplace.VmConfiguration)
    assert pins == dict(config.cpu_sets[0].vcpu_pins)
    topology = domain.find("cpu/topology")
    assert topology is not None
    assert topology.get("threads") == "2"  # the howtogroup pairs sit on sibling threads


def test_vnf_template_prints_every_configuration(files: Path) -> None:
    (files / "du.yaml").write_text(nfvplace.dump(vm("du", [cpu_set(0, 2)])))
    (files / "vnf.yaml").write_text(
        "schema: nfvplace/vnf/v1\nname: ran\nmembers:\n  - {name: du, file: du.yaml, count: 2}\n"
    )
    out = runner.invoke(
        app,
        [
            "place",
            "--hosts",
            str(files / "hosts"),
            "--vm",
            str(files / "vnf.yaml"),
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    document = json.loads(out.stdout)
    assert document["schema"] == "nfvplace/vm-configurations/v1"
    assert [d["instance"] for d in document["configurations"]] == ["ran.du-1", "ran.du-2"]


def test_no_fit_as_json(files: Path) -> None:
    out = runner.invoke(
        app,
        [
            "place",
            "--hosts",
            str(files / "hosts"),
            "--vm",
            str(files / "big.yaml"),
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 3
    diagnosis = json.loads(out.stdout)
    assert diagnosis["hosts_considered"] == 2
    assert {r["reason"] for r in diagnosis["rejections"]} == {"core_pairs"}


def test_missing_file_exits_1(files: Path) -> None:
    out = runner.invoke(
        app, ["place", "--hosts", str(files / "nope.yaml"), "--vm", str(files / "vm.yaml")]
    )
    assert out.exit_code == 1
    assert "nfvplace.input.unreadable" in out.stderr
