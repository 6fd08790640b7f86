"""`place` and `capacity` refuse what `lint` refuses; a VNF's output is one document that `lint` and `render` take."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from lxml import etree
from typer.testing import CliRunner

import nfvplace
from nfvplace.cli import _register, app
from nfvplace.models import VmConfigurations

_register()
ROOT = Path(__file__).resolve().parents[2]
FLEET = str(ROOT / "examples" / "fleet")
VNF = str(ROOT / "examples" / "vnf" / "ran-site.yaml")

# The case: the same vCPU id in two cpu-sets.
SAME_VCPU_TWICE = """\
schema: nfvplace/vmd/v1
name: dup
hypervisor: {type: kvm, required_capabilities: [cpu_pinning]}
cpu_sets:
  - id: 0
    vcpus: [0, 1]
    memory_mib: 1024
  - id: 1
    vcpus: [1, 2]
    memory_mib: 1024
"""


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def dup_vm(tmp_path: Path) -> Path:
    path = tmp_path / "dup.yaml"
    path.write_text(SAME_VCPU_TWICE, encoding="utf-8")
    return path


def _lint_error_rules(path: Path) -> set[str]:
    code, out, _ = _run("lint", "--format", "json", str(path))
    assert code == 1
    return {f["rule"] for f in json.loads(out) if f["severity"] == "error"}


@pytest.mark.parametrize("command", ["place", "capacity"])
def test_commands_refuse_what_lint_refuses_with_the_same_rule_ids(
    dup_vm: Path, command: str
) -> None:
    rules = _lint_error_rules(dup_vm)
    assert "NFV101" in rules
    code, out, err = _run(command, "--hosts", FLEET, "--vm", str(dup_vm))
    assert code == 1
    assert out == ""
    assert "error [nfvplace.input.invalid]" in err
    assert {rule for rule in rules if rule in err} == rules
    assert "line 9" in err  # the line of the second cpu-set's vcpus, as lint says


@pytest.mark.parametrize("door", [nfvplace.place, nfvplace.capacity], ids=["place", "capacity"])
def test_library_doors_raise_lint_error_with_the_findings(dup_vm: Path, door: Any) -> None:
    vm = nfvplace.load(dup_vm)
    with pytest.raises(nfvplace.LintError) as caught:
        door(nfvplace.load(FLEET), vm)
    error = caught.value
    assert error.code == "nfvplace.input.invalid"
    assert {f.rule for f in error.findings if f.severity == "error"} == _lint_error_rules(dup_vm)
    assert all(f.code == "nfvplace.input.invalid" for f in error.findings if f.code)


@pytest.fixture(scope="module")
def vnf_document(tmp_path_factory: pytest.TempPathFactory) -> Path:
    code, out, err = _run("place", "--hosts", FLEET, "--vm", VNF)
    assert code == 0, err
    path = tmp_path_factory.mktemp("vnf") / "ran-site.configs.yaml"
    path.write_text(out, encoding="utf-8")
    return path


def test_a_vnf_is_placed_as_one_document_that_lint_accepts(vnf_document: Path) -> None:
    data = yaml.safe_load(vnf_document.read_text(encoding="utf-8"))
    assert data["schema"] == "nfvplace/vm-configurations/v1"
    assert data["vnf"] == "ran-site"
    instances = [c["instance"] for c in data["configurations"]]
    assert instances == ["ran-site.du-1", "ran-site.cu-up-1", "ran-site.cu-cp-1"]
    loaded = nfvplace.load(vnf_document)
    assert isinstance(loaded, VmConfigurations)
    code, out, _ = _run("lint", "--no-color", str(vnf_document))
    assert code == 0, out


def test_json_output_of_a_vnf_is_one_document() -> None:
    code, out, _ = _run("place", "--hosts", FLEET, "--vm", VNF, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == "nfvplace/vm-configurations/v1"
    assert len(data["configurations"]) == 3


def test_libvirt_of_several_domains_is_one_xml_document(vnf_document: Path) -> None:
    for args in (
        ["render", "-f", "libvirt", str(vnf_document)],
        ["place", "--hosts", FLEET, "--vm", VNF, "-f", "libvirt"],
    ):
        code, out, _ = _run(*args)
        assert code == 0
        root = etree.fromstring(out.encode())
        assert root.tag == "domains"
        names = [d.findtext("name") for d in root.findall("domain")]
        assert names == ["ran-site.du-1", "ran-site.cu-up-1", "ran-site.cu-cp-1"]


def test_out_folder_gets_one_file_per_domain(vnf_document: Path, tmp_path: Path) -> None:
    target = tmp_path / "domains"
    code, out, err = _run("render", "-f", "libvirt", str(vnf_document), "-o", str(target))
    assert code == 0
    assert out == ""
    files = sorted(p.name for p in target.iterdir())
    assert files == ["ran-site.cu-cp-1.xml", "ran-site.cu-up-1.xml", "ran-site.du-1.xml"]
    for path in target.iterdir():
        assert etree.parse(str(path)).getroot().tag == "domain"
        assert f"wrote {path}" in err


def test_openstack_of_several_vms_is_a_yaml_stream(vnf_document: Path) -> None:
    code, out, _ = _run("render", "-f", "openstack", str(vnf_document))
    assert code == 0
    documents = list(yaml.safe_load_all(out))
    assert [d["flavor"]["name"] for d in documents] == ["vran-du", "cu-up", "cu-cp"]


def test_vmx_of_several_vms_needs_a_folder(vnf_document: Path, tmp_path: Path) -> None:
    code, out, err = _run("render", "-f", "vmx", str(vnf_document))
    assert code == 2
    assert out == ""
    assert "-o DIR" in err
    code, _, _ = _run("render", "-f", "vmx", str(vnf_document), "-o", str(tmp_path / "vmx"))
    assert code == 0
    assert len(list((tmp_path / "vmx").glob("*.vmx"))) == 3


@pytest.mark.parametrize("command", ["place", "render"])
def test_unknown_format_is_a_usage_error(command: str, vnf_document: Path) -> None:
    args = (
        ["place", "--hosts", FLEET, "--vm", VNF]
        if command == "place"
        else ["render", str(vnf_document)]
    )
    code, out, err = _run(*args, "--format", "ovf")
    assert code == 2
    assert out == ""
    assert "error [nfvplace.usage.invalid_option]: unknown --format 'ovf'" in err
