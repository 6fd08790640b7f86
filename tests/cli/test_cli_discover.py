"""`nfvplace discover` end to end, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hwloc_corpus import corpus_file

from nfvplace import load
from nfvplace.models import ComputeHostDescriptor

ROOT = Path(__file__).resolve().parents[2]


def find_corpus() -> Path:
    return corpus_file("README.md").parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nfvplace", "discover", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_hwloc_xml_to_yaml_file(tmp_path: Path) -> None:
    out = tmp_path / "host.yaml"
    done = run(
        "--hwloc-xml",
        str(find_corpus() / "24em64t-2n6c2t-pci.xml"),
        "--id",
        "sl390",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    chd = load(out)
    assert isinstance(chd, ComputeHostDescriptor)
    assert chd.id == "sl390"
    assert len(chd.cpus) == 24


def test_segfault_file_json_on_stdout() -> None:
    done = run(
        "--hwloc-xml",
        str(find_corpus() / "pyhwloc-segfault/16amd64-4distances.xml"),
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["schema"] == "nfvplace/chd/v1"
    assert data["id"] == "16amd64-4distances"
    assert len(data["numa_nodes"]) == 8


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"<not-closed", "not well-formed XML"),
        (b"<html/>", "not an hwloc XML export"),
        (None, "cannot read file"),
    ],
)
def test_bad_input_exits_1_with_reason_and_no_traceback(
    tmp_path: Path, content: bytes | None, reason: str
) -> None:
    path = tmp_path / "topo.xml"
    if content is not None:
        path.write_bytes(content)
    done = run("--hwloc-xml", str(path))
    assert done.returncode == 1
    assert "nfvplace.discovery.failed" in done.stderr
    assert reason in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_bad_sysfs_root_exits_1(tmp_path: Path) -> None:
    done = run("--sysfs-root", str(tmp_path / "absent"))
    assert done.returncode == 1
    assert "not a directory" in done.stderr
    assert "Traceback" not in done.stderr


def test_unwritable_output_exits_1(tmp_path: Path) -> None:
    done = run(
        "--hwloc-xml",
        str(find_corpus() / "doc-devel09-pci.xml"),
        "-o",
        str(tmp_path / "missing-dir" / "x.yaml"),
    )
    assert done.returncode == 1
    assert "cannot write" in done.stderr


def test_live_discovery_writes_a_valid_chd(tmp_path: Path) -> None:
    out = tmp_path / "live.json"
    done = run("--id", "me", "-o", str(out), "--format", "json")
    assert done.returncode == 0, done.stderr
    chd = load(out)
    assert isinstance(chd, ComputeHostDescriptor)
    assert chd.id == "me"
