"""`nfvplace render`: exit 0 with the text, 1 with a clear error (never a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nfvplace.cli import _register, app

from ._support import FIGURE8_VMD, FIXTURES, GOLDEN

_register()
RUNNER = CliRunner()
CONFIG = str(FIXTURES / "figure8.config.yaml")
HOST = str(FIXTURES / "compute-07.yaml")


def _run(*args: str) -> tuple[int, str, str]:
    result = RUNNER.invoke(app, ["render", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_libvirt_to_stdout_matches_the_golden_file() -> None:
    code, out, err = _run("--format", "libvirt", CONFIG, "--vm", str(FIGURE8_VMD), "--host", HOST)
    assert code == 0
    assert out == (GOLDEN / "libvirt" / "figure8.xml").read_text(encoding="utf-8")
    assert err == ""


def test_warnings_go_to_stderr() -> None:
    code, out, err = _run("--format", "openstack", CONFIG)
    assert code == 0
    assert "hw:cpu_policy: dedicated" in out
    assert "warning: " in err
    assert "warning" not in out


def test_output_file(tmp_path: Path) -> None:
    target = tmp_path / "vm.vmx"
    code, out, _ = _run("--format", "vmx", CONFIG, "-o", str(target))
    assert code == 0
    assert out == ""
    assert 'sched.cpu.affinity.exclusive = "TRUE"' in target.read_text(encoding="utf-8")


def test_host_tuning_takes_several_configurations() -> None:
    configs = sorted(str(p) for p in FIXTURES.glob("*.config.yaml"))
    code, out, _ = _run("--format", "host-tuning", *configs, "--host", HOST)
    assert code == 0
    assert out == (GOLDEN / "host-tuning" / "compute-07.sh").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--format", "libvirt", HOST], "CONFIG expects a VM Configuration"),
        (["--format", "libvirt", CONFIG, "--vm", HOST], "--vm expects a VM Descriptor"),
        (["--format", "libvirt", CONFIG, "--host", CONFIG], "--host expects a Compute Host"),
        (
            ["--format", "libvirt", CONFIG, "--vm", str(FIXTURES / "vran-du.vmd.yaml")],
            "nfvplace.render.mismatch",
        ),
        (["--format", "libvirt", "/no/such/file.yaml"], "nfvplace.input.unreadable"),
    ],
)
def test_errors_exit_1_with_a_reason(args: list[str], needle: str) -> None:
    code, out, err = _run(*args)
    assert code == 1
    assert out == ""
    assert needle in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--format", "ovf", CONFIG], "nfvplace.usage.invalid_option"),
        (["--format", "vmx", CONFIG, CONFIG], "a .vmx file holds one VM"),
    ],
)
def test_usage_errors_exit_2(args: list[str], needle: str) -> None:
    code, out, err = _run(*args)
    assert code == 2
    assert out == ""
    assert needle in err


def test_invalid_configuration_names_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "schema: nfvplace/vm-configuration/v1\nvm: x\nhost: h\n"
        "cpu_sets:\n  - {id: 0, numa_node: 0, vcpu_pins: {0: 1}, memory_mib: 512}\n"
        "  - {id: 1, numa_node: 1, vcpu_pins: {0: 2}, memory_mib: 512}\n",
        encoding="utf-8",
    )
    code, _, err = _run("--format", "libvirt", str(bad))
    assert code == 1
    assert "nfvplace.render.invalid" in err
    assert "vCPU 0 is pinned twice" in err
    assert "cpu_sets[1].vcpu_pins.0" in err


def test_malformed_yaml(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: [unclosed\n", encoding="utf-8")
    code, _, err = _run("--format", "libvirt", str(bad))
    assert code == 1
    assert "nfvplace.input.syntax" in err
