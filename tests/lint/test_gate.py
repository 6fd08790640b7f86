"""`load_gated`: a file and a VNF template's member files each read once, the members inline;
`refuse` and `passes`: the gate's verdict without its findings."""

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
from nfvplace.lint.gate import gate, load_gated, passes, refuse
from nfvplace.models.loading import SourceDocument
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
    except (ValidationError, ValueError, yaml.YAMLError):
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


def _documents() -> list[tuple[str, SourceDocument, VmDescriptor]]:
    """The table's VM Descriptors as documents in nfvplace's format (each validated), with the
    document rules' cases that validate too (a decimal unit spelling, NFV002, is one)."""
    from .test_rules_document import CASES as DOCUMENT_CASES

    out = []
    for k, case in enumerate([*VMD_CASES, *DOCUMENT_CASES]):
        for text in (case.bad, case.good):
            if (model := _validated(text)) is None:
                continue  # the schema refuses it (or it does not parse): no model to gate
            data = yaml.safe_load(textwrap.dedent(text))
            if isinstance(data, dict):
                out.append((f"{case.id}-{k}", SourceDocument(data=data, source="body.vm"), model))
    for vm in request_stream(40, seed=3):
        data = vm.model_dump(mode="json", by_alias=True, exclude_none=True)
        out.append((vm.name, SourceDocument(data=data, source="body.vm"), vm))
    return out


DOCUMENTS = _documents()


@pytest.mark.parametrize(
    ("document", "model"), [d[1:] for d in DOCUMENTS], ids=[d[0] for d in DOCUMENTS]
)
def test_passes_says_what_the_gate_says(document: SourceDocument, model: VmDescriptor) -> None:
    """`passes` (the service's gate for a VM Descriptor body) is True exactly where `gate`
    passes the document; the service then builds the gate's findings only for a refusal."""
    try:
        gate(document, "VM Descriptor", validated=model)
        verdict = True
    except LintError:
        verdict = False
    assert passes(document, model) is verdict


def test_the_documents_hold_refusals_passes_and_a_unit_spelling() -> None:
    verdicts = [passes(document, model) for _, document, model in DOCUMENTS]
    assert sum(verdicts) >= 40
    assert verdicts.count(False) >= 10
    # NFV002 (a warning) is found in the document, not the model: it passes, as the gate does
    assert any(name.startswith("NFV002") for name, _, _ in DOCUMENTS)


def test_passes_leaves_other_documents_to_the_gate() -> None:
    vm = request_stream(1, seed=3)[0]
    data = vm.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert passes(SourceDocument(data=data, source="b"), vm)
    assert not passes(SourceDocument(data={**data, "schema": "nfvplace/vnf/v1"}, source="b"), vm)
    assert not passes(SourceDocument(data=[data], source="b"), vm)
