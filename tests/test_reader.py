"""One reader above the models and the dialects: every door loads every format."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import nfvplace
from nfvplace import reader
from nfvplace.errors import DescriptorError
from nfvplace.models import loading

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_the_models_do_not_import_the_dialects() -> None:
    models = Path(loading.__file__).parent
    for path in models.glob("*.py"):
        imports = [
            node
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and "dialects" in (node.module or "")
        ]
        assert not imports, path


def test_models_load_only_our_format_and_the_reader_every_dialect() -> None:
    path = EXAMPLES / "dialects" / "openvim-vbras.yaml"
    with pytest.raises(DescriptorError, match="no 'schema:'"):
        loading.parse_own_file(path)
    vm = nfvplace.load(path)
    assert isinstance(vm, nfvplace.VmDescriptor)
    assert vm == reader.load(path)


def test_vnf_members_in_a_dialect_are_loaded_relative_to_the_template(tmp_path: Path) -> None:
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "dp.yaml").write_text(
        (EXAMPLES / "dialects" / "openvim-vbras.yaml").read_text()
    )
    (tmp_path / "vnf.yaml").write_text(
        "schema: nfvplace/vnf/v1\nname: v\nmembers:\n  - {name: dp, file: parts/dp.yaml}\n"
    )
    template = nfvplace.load(tmp_path / "vnf.yaml")
    assert isinstance(template, nfvplace.VnfTemplate)
    member = template.members[0].descriptor
    assert member is not None
    assert member.name == "vbras"


def test_a_dialect_error_names_the_vendor_field_and_line(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text("name: f\nvcpus: 2\nram: 1024\nextra_specs:\n  hw:cpu_policy: dedicatedd\n")
    with pytest.raises(DescriptorError) as caught:
        nfvplace.load(path)
    (issue,) = caught.value.issues
    assert (issue.path, issue.line) == ("extra_specs.hw:cpu_policy", 5)
    assert "'shared', 'dedicated', 'mixed'" in issue.message
