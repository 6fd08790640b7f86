"""The file edge: folders, hidden entries, order, unreadable files, and the report's exit code."""

from __future__ import annotations

from pathlib import Path

from nfvplace.lint import Severity, lint_paths

VM = "schema: nfvplace/vmd/v1\nname: {name}\nvcpus: 1\nmemory_mib: 512\n"


def test_folders_are_walked_in_order_skipping_hidden(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.yaml").write_text(VM.format(name="z"))
    (tmp_path / "a.json").write_text(
        '{"schema": "nfvplace/vmd/v1", "name": "a", "vcpus": 1, "memory_mib": 1}'
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.yaml").write_text("not: [valid")
    (tmp_path / "notes.txt").write_text("ignored")
    report = lint_paths([tmp_path])
    assert [Path(r.file).name for r in report.files] == ["a.json", "z.yaml"]
    assert report.exit_code == 0
    assert report.summary() == "2 files checked: 0 errors, 0 warnings, 0 info"


def test_exit_codes(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(VM.format(name="good"))
    warn = tmp_path / "warn.yaml"
    warn.write_text(VM.format(name="warn").replace("512", "1GB"))
    bad = tmp_path / "bad.yaml"
    bad.write_text(VM.format(name="bad").replace("vcpus: 1", "vcpus: 0"))
    assert lint_paths([good]).exit_code == 0
    assert lint_paths([good, warn]).exit_code == 0
    assert lint_paths([warn]).counts[Severity.warning] == 1
    assert lint_paths([good, bad]).exit_code == 1
    report = lint_paths([bad, tmp_path / "missing.yaml"])
    assert report.exit_code == 2
    assert report.unreadable == (str(tmp_path / "missing.yaml"),)
    assert report.summary().endswith("; 1 file unreadable")
