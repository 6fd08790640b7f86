"""`nfvplace discover --hwloc-xml` over several exports or a folder: one CHD per export."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from hwloc_corpus import corpus_file
from typer.testing import CliRunner

import nfvplace
from nfvplace.cli import _register, app
from nfvplace.models import ComputeHostDescriptor

_register()
runner = CliRunner()
NAMES = ("16intel64-manyVFs.xml", "192em64t-24n8c2t.xml", "24em64t-2n6c2t-pci.xml")


@pytest.fixture
def exports(tmp_path: Path) -> Path:
    folder = tmp_path / "exports" / "lab"
    folder.mkdir(parents=True)
    for name in NAMES:
        shutil.copy(corpus_file(name), folder / name)
    return folder.parent


def test_a_folder_gives_one_chd_per_export(exports: Path, tmp_path: Path) -> None:
    out = runner.invoke(app, ["discover", "--hwloc-xml", str(exports), "-o", str(tmp_path / "chd")])
    assert out.exit_code == 0, out.output
    written = sorted((tmp_path / "chd").iterdir())
    assert [p.name for p in written] == sorted(f"{Path(n).stem}.yaml" for n in NAMES)
    for path in written:
        host = nfvplace.load(path)
        assert isinstance(host, ComputeHostDescriptor)
        assert host.id == path.stem


def test_several_files_on_stdout(exports: Path) -> None:
    files = [str(exports / "lab" / name) for name in NAMES[:2]]
    out = runner.invoke(app, ["discover", "--hwloc-xml", files[0], "--hwloc-xml", files[1]])
    assert out.exit_code == 0, out.output
    ids = [doc["id"] for doc in yaml.safe_load_all(out.stdout)]
    assert ids == [Path(n).stem for n in NAMES[:2]]
    as_json = runner.invoke(app, ["discover", "--hwloc-xml", str(exports), "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    assert len(json.loads(as_json.stdout)) == len(NAMES)


def test_a_bad_export_is_named_and_the_others_are_written(exports: Path, tmp_path: Path) -> None:
    (exports / "lab" / "broken.xml").write_text("not xml")
    out = runner.invoke(app, ["discover", "--hwloc-xml", str(exports), "-o", str(tmp_path / "chd")])
    assert out.exit_code == 1
    assert "broken.xml" in out.output
    assert "Traceback" not in out.output
    assert len(list((tmp_path / "chd").iterdir())) == len(NAMES)


def test_id_is_refused_with_several_exports(exports: Path) -> None:
    out = runner.invoke(app, ["discover", "--hwloc-xml", str(exports), "--id", "x"])
    assert out.exit_code == 2
    assert "named after its file" in out.output
