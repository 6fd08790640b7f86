from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import nfvplace
from nfvplace.models import ComputeHostDescriptor, VmConfiguration, VmDescriptor

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
ROOT = HERE.parents[1]
FIGURE8_VMD = ROOT / "examples" / "vms" / "nfv-per-001-figure8.yaml"

# case name -> (configuration file, VM Descriptor file or None)
CASES: dict[str, tuple[Path, Path | None]] = {
    "figure8": (FIXTURES / "figure8.config.yaml", FIGURE8_VMD),
    "vran-du": (FIXTURES / "vran-du.config.yaml", FIXTURES / "vran-du.vmd.yaml"),
    "vhost-user": (FIXTURES / "vhost-user.config.yaml", None),
    "plain": (FIXTURES / "plain.config.yaml", None),
}


def load_config(case: str) -> VmConfiguration:
    config = nfvplace.load(CASES[case][0])
    assert isinstance(config, VmConfiguration)
    return config


def load_vm(case: str) -> VmDescriptor | None:
    path = CASES[case][1]
    if path is None:
        return None
    vm = nfvplace.load(path)
    assert isinstance(vm, VmDescriptor)
    return vm


def load_host() -> ComputeHostDescriptor:
    host = nfvplace.load(FIXTURES / "compute-07.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    return host


def virt_xml_validate(xml: str, tmp_path: Path, name: str = "domain.xml") -> None:
    """Validate a domain XML against libvirt's own RelaxNG schemas; fail (never skip) without them."""
    tool = shutil.which("virt-xml-validate")
    if tool is None or shutil.which("xmllint") is None:
        pytest.fail(
            "virt-xml-validate (Debian package libvirt-clients) and xmllint (libxml2-utils) are "
            "needed to check rendered domain XML: apt-get install -y libvirt-clients libxml2-utils"
        )
    path = tmp_path / name
    path.write_text(xml, encoding="utf-8")
    proc = subprocess.run(
        [tool, str(path), "domain"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, f"{name} fails libvirt's schema:\n{proc.stdout}\n{proc.stderr}"
