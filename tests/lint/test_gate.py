"""`load_gated`: a file and a VNF template's member files each read once, the members inline;
`refuse`: the gate's refusal without its findings."""

from __future__ import annotations

import importlib
import shutil
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from bench.hostgen import request_stream
from nfvplace.errors import LintError
from nfvplace.lint.gate import gate, load_gated, refuse
from nfvplace.models.vmd import VmDescriptor
from nfvplace.models.vnf import VnfTemplate

from .test_rules_vmd import CASES as VMD_CASES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "vnf"


def test_a_template_and_each_member_file_are_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "vnf")
    reads: Counter[str] = Counter()
    real = importlib.import_module("nfvplace.reader").read_path

    def counting(path: str | Path) -> object:
        reads[Path(path).name] += 1
        return real(path)

    for name in ("nfvplace.reader", "nfvplace.lint.gate", "nfvplace.lint.files"):
        module = importlib.import_module(name)
        monkeypatch.setattr(module, "read_path", counting)
    template = load_gated(tmp_path / "vnf" / "ran-site.yaml", "VNF template")
    assert isinstance(template, VnfTemplate)
    assert all(member.descriptor is not None for member in template.members)
    assert reads == Counter({"ran-site.yaml": 1, "du.yaml": 1, "cu-up.yaml": 1})


def test_a_missing_member_file_is_refused_by_name(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "vnf")
    (tmp_path / "vnf" / "members" / "du.yaml").unlink()
    with pytest.raises(LintError, match="NFV704") as refused:
        load_gated(tmp_path / "vnf" / "ran-site.yaml", "VNF template")
    assert [issue.path for issue in refused.value.issues] == ["members[0].file"]
    assert "members/du.yaml" in refused.value.issues[0].message


def _validated(text: str) -> VmDescriptor | None:
    try:
        model = VmDescriptor.model_validate(yaml.safe_load(textwrap.dedent(text)))
    except (ValidationError, ValueError):
        return None  # a document the schema refuses: no model to gate
    return model


def _outcome(fn: Callable[[VmDescriptor, str], object], vm: VmDescriptor) -> object:
    try:
        fn(vm, "VM Descriptor")
    except LintError as exc:
        return (exc.code, str(exc), exc.issues, exc.findings, exc.file)
    return None


VMS = [
    vm
    for case in VMD_CASES
    for text in (case.bad, case.good)
    if (vm := _validated(text)) is not None
] + request_stream(40, seed=3)


@pytest.mark.parametrize("vm", VMS, ids=lambda vm: vm.name)
def test_refuse_refuses_as_the_gate_does(vm: VmDescriptor) -> None:
    """`refuse` (what `Fleet.place` calls) builds no finding when lint passes, and raises the
    very `LintError` of `gate` when it does not."""
    assert _outcome(refuse, vm) == _outcome(gate, vm)


def test_the_table_refuses_some_and_passes_some() -> None:
    outcomes = [_outcome(gate, vm) for vm in VMS]
    assert sum(o is None for o in outcomes) >= 40
    assert sum(o is not None for o in outcomes) >= 10
