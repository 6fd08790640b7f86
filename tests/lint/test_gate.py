"""`load_gated`: a file and a VNF template's member files each read once, the members inline."""

from __future__ import annotations

import importlib
import shutil
from collections import Counter
from pathlib import Path

import pytest

from nfvplace.errors import LintError
from nfvplace.lint.gate import load_gated
from nfvplace.models.vnf import VnfTemplate

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
