"""Golden files: every target for every example configuration.

Regenerate after an intended change with `NFVPLACE_UPDATE_GOLDEN=1 pytest tests/render`, then
review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nfvplace.render import RenderResult, render, render_host_tuning

from ._support import (
    CASES,
    GOLDEN,
    libvirt_define,
    load_config,
    load_host,
    load_vm,
    virt_xml_validate,
)

UPDATE = os.environ.get("NFVPLACE_UPDATE_GOLDEN") == "1"
SUFFIX = {"libvirt": "xml", "openstack": "yaml", "vmx": "vmx", "host-tuning": "sh"}


def _check(result: RenderResult, text_path: Path) -> None:
    warnings_path = text_path.with_suffix(text_path.suffix + ".warnings")
    warnings = "".join(f"{w}\n" for w in result.warnings)
    if UPDATE:
        text_path.parent.mkdir(parents=True, exist_ok=True)
        text_path.write_text(result.text, encoding="utf-8")
        warnings_path.write_text(warnings, encoding="utf-8")
    assert text_path.exists(), f"missing golden file {text_path}; run with NFVPLACE_UPDATE_GOLDEN=1"
    assert result.text == text_path.read_text(encoding="utf-8"), f"{text_path} differs"
    assert warnings == warnings_path.read_text(encoding="utf-8"), f"{warnings_path} differs"


@pytest.mark.parametrize("fmt", ["libvirt", "openstack", "vmx", "host-tuning"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str, fmt: str) -> None:
    result = render(load_config(case), fmt, vm=load_vm(case), host=load_host())
    _check(result, GOLDEN / fmt / f"{case}.{SUFFIX[fmt]}")


@pytest.mark.parametrize("fmt", ["libvirt", "openstack"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_from_the_configuration_alone(case: str, fmt: str) -> None:
    """Without --vm and --host: libvirt needs nothing more, OpenStack derives from the pins."""
    result = render(load_config(case), fmt)
    _check(result, GOLDEN / f"{fmt}-config-only" / f"{case}.{SUFFIX[fmt]}")


def test_golden_host_tuning_all_vms_on_the_host() -> None:
    configs = [load_config(case) for case in sorted(CASES)]
    _check(render_host_tuning(configs, load_host()), GOLDEN / "host-tuning" / "compute-07.sh")


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_libvirt_files_are_valid_domains(case: str, tmp_path: Path) -> None:
    """The checked-in golden XML itself passes libvirt's schema and parser (not only what we
    render now)."""
    for folder in ("libvirt", "libvirt-config-only"):
        text = (GOLDEN / folder / f"{case}.xml").read_text(encoding="utf-8")
        virt_xml_validate(text, tmp_path, f"{folder}-{case}.xml")
        libvirt_define(text, tmp_path, f"{folder}-{case}.xml")
