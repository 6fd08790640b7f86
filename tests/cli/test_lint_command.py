"""`nfvplace lint` end to end through typer's CliRunner: exit codes and the three formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nfvplace.cli import _register, app
from nfvplace.lint import ALL_RULES

_register()
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BAD = "schema: nfvplace/vmd/v1\nname: bad\ncpu_sets:\n  - {id: 0, vcpus: [0, 0], memory_mib: 1GB}\n"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    return path


def test_examples_are_clean(runner: CliRunner) -> None:
    result = runner.invoke(app, ["lint", str(EXAMPLES)])
    assert result.exit_code == 0, result.output
    assert "0 errors, 0 warnings" in result.output


def test_errors_exit_1_with_rule_path_line_and_fix(runner: CliRunner, bad_file: Path) -> None:
    result = runner.invoke(app, ["lint", "--no-color", str(bad_file)])
    assert result.exit_code == 1
    assert (
        f"{bad_file}:4: error NFV101 (nfvplace.input.invalid) cpu_sets[0].vcpus[1]: vCPU 0 is listed twice"
        in result.output
    )
    assert "fix: " in result.output
    assert "1 file checked: 1 error, 1 warning" in result.output


def test_warnings_alone_exit_0(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text("schema: nfvplace/vmd/v1\nname: w\nvcpus: 1\nmemory_mib: 1GB\n")
    result = runner.invoke(app, ["lint", str(path)])
    assert result.exit_code == 0
    assert "NFV002" in result.output


def test_missing_file_exits_2(runner: CliRunner, tmp_path: Path, bad_file: Path) -> None:
    result = runner.invoke(app, ["lint", str(bad_file), str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2
    assert "nfvplace.input.unreadable" in result.output


def test_binary_file_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "blob.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    result = runner.invoke(app, ["lint", str(path)])
    assert result.exit_code == 2
    assert "NFV009" in result.output


@pytest.mark.parametrize("args", [[], ["--format", "xml", "x.yaml"], ["--bogus"]])
def test_usage_errors_exit_2(runner: CliRunner, args: list[str]) -> None:
    result = runner.invoke(app, ["lint", *args])
    assert result.exit_code == 2


def test_json_format(runner: CliRunner, bad_file: Path) -> None:
    result = runner.invoke(app, ["lint", "--format", "json", str(bad_file)])
    assert result.exit_code == 1
    findings = json.loads(result.stdout)
    assert {"rule", "severity", "file", "path", "message", "line", "hint"} <= set(findings[0])
    by_rule = {f["rule"]: f for f in findings}
    assert by_rule["NFV101"]["severity"] == "error"
    assert by_rule["NFV101"]["path"] == "cpu_sets[0].vcpus[1]"
    assert by_rule["NFV101"]["line"] == 4
    assert by_rule["NFV002"]["severity"] == "warning"


def test_json_format_clean_is_an_empty_list(runner: CliRunner) -> None:
    result = runner.invoke(app, ["lint", "-f", "json", str(EXAMPLES / "vms" / "sriov-small.yaml")])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == []


def test_sarif_format(runner: CliRunner, bad_file: Path) -> None:
    result = runner.invoke(app, ["lint", "--format", "sarif", str(bad_file)])
    assert result.exit_code == 1
    sarif = json.loads(result.stdout)
    assert sarif["version"] == "2.1.0"
    assert sarif["$schema"].endswith("sarif-2.1.0.json")
    (run,) = sarif["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "nfvplace"
    assert [r["id"] for r in driver["rules"]] == [r.id for r in ALL_RULES]
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    results = {r["ruleId"]: r for r in run["results"]}
    dup = results["NFV101"]
    assert dup["level"] == "error"
    assert driver["rules"][dup["ruleIndex"]]["id"] == "NFV101"
    (location,) = dup["locations"]
    assert location["physicalLocation"]["region"]["startLine"] == 4
    assert location["physicalLocation"]["artifactLocation"]["uri"].endswith("bad.yaml")
    assert location["logicalLocations"][0]["fullyQualifiedName"] == "cpu_sets[0].vcpus[1]"
    assert results["NFV002"]["level"] == "warning"


def test_folder_and_dialect(runner: CliRunner) -> None:
    args = ["lint", "--no-color", "--min-severity", "info", str(EXAMPLES / "dialects")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0
    assert "read as openstack-flavor" in result.output  # NFV004, an info finding
    assert "4 files checked" in result.output


def test_stdin(runner: CliRunner) -> None:
    result = runner.invoke(app, ["lint", "--format", "json", "-"], input=BAD)
    assert result.exit_code == 1
    findings = json.loads(result.stdout)
    assert {f["file"] for f in findings} == {"<stdin>"}
    assert "NFV101" in {f["rule"] for f in findings}


def test_info_findings_are_shown_only_when_asked_for(runner: CliRunner) -> None:
    quiet = runner.invoke(app, ["lint", "--no-color", str(EXAMPLES)])
    assert quiet.exit_code == 0
    assert " info NFV" not in quiet.output
    summary = quiet.output.strip().splitlines()[-1]
    assert summary.endswith("info (info not shown: --min-severity info shows them)")
    told = runner.invoke(app, ["lint", "--no-color", "--min-severity", "info", str(EXAMPLES)])
    assert told.exit_code == 0
    assert " info NFV050 " in told.output
    shown = told.output.count(" info NFV")
    assert f", {shown} info" in summary  # the counts are the same either way


@pytest.mark.parametrize("output_format", ["json", "sarif"])
def test_machine_formats_follow_min_severity(runner: CliRunner, output_format: str) -> None:
    def rules(*extra: str) -> set[str]:
        args = ["lint", "-f", output_format, *extra, str(EXAMPLES / "dialects")]
        result = runner.invoke(app, args)
        assert result.exit_code == 0
        document = json.loads(result.stdout)
        if output_format == "json":
            return {f["rule"] for f in document}
        return {r["ruleId"] for r in document["runs"][0]["results"]}

    assert "NFV004" not in rules()
    assert "NFV004" in rules("--min-severity", "info")


def test_min_severity_error_hides_warnings_and_keeps_the_exit_code(
    runner: CliRunner, bad_file: Path, tmp_path: Path
) -> None:
    result = runner.invoke(app, ["lint", "--no-color", "--min-severity", "error", str(bad_file)])
    assert result.exit_code == 1
    assert "NFV101" in result.output
    assert "NFV002" not in result.output
    assert "1 error, 1 warning, 1 info (warning and info not shown" in result.output
    warned = tmp_path / "w.yaml"
    warned.write_text("schema: nfvplace/vmd/v1\nname: w\nvcpus: 1\nmemory_mib: 1GB\n")
    result = runner.invoke(app, ["lint", "--min-severity", "error", str(warned)])
    assert result.exit_code == 0
