"""NFV203: a hugepage size no processor has is refused, by lint and so by every command; the sizes
accepted are the architecture's own when the descriptor names one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from nfvplace.lint import lint_text
from nfvplace.models.page_sizes import page_sizes_kib

ROOT = Path(__file__).resolve().parents[2]


def _vm(size: str, architecture: str | None = None) -> str:
    doc: dict[str, object] = {
        "schema": "nfvplace/vmd/v1",
        "name": "paged",
        "cpu_sets": [
            {"id": 0, "vcpus": [0], "memory_mib": 16384, "hugepages": {"size": size, "count": 1}}
        ],
    }
    if architecture:
        doc["processor"] = {"architecture": architecture}
    return yaml.safe_dump(doc)


def _rules(text: str) -> dict[str, str]:
    return {f.rule: f.severity.value for f in lint_text(text, "vm.yaml").findings}


@pytest.mark.parametrize(
    ("size", "architecture", "refused"),
    [
        ("3MiB", None, True),
        ("4MiB", None, True),
        ("2MiB", None, False),
        ("1GiB", None, False),
        ("512MiB", None, False),  # an arm64 size, and no architecture is named
        ("512MiB", "x86_64", True),
        ("512MiB", "aarch64", False),
        ("32MiB", "arm64", False),
        ("16GiB", "amd64", True),
        ("16MiB", "ppc64le", False),
        ("1MiB", "s390x", False),
        ("1MiB", "x86_64", True),
        ("64KiB", "riscv64", False),
        ("3MiB", "sparc", True),  # an architecture nfvplace does not know: any processor's sizes
    ],
)
def test_the_page_sizes_accepted_are_those_of_real_processors(
    size: str, architecture: str | None, refused: bool
) -> None:
    rules = _rules(_vm(size, architecture))
    assert (rules.get("NFV203") == "error") is refused, rules


def test_the_finding_names_the_sizes_to_use() -> None:
    (finding,) = [
        f for f in lint_text(_vm("512MiB", "x86_64"), "vm.yaml").findings if f.rule == "NFV203"
    ]
    assert "x86_64" in finding.message
    assert finding.hint is not None
    assert "2MiB" in finding.hint
    assert "1GiB" in finding.hint


def test_aliases_name_one_architecture() -> None:
    assert page_sizes_kib("ARM64") == page_sizes_kib("aarch64")
    assert page_sizes_kib(None)[0] is None


@pytest.mark.parametrize("command", ["place", "lint"])
def test_no_command_places_what_lint_refuses(tmp_path: Path, command: str) -> None:
    vm = tmp_path / "vm.yaml"
    vm.write_text(_vm("3MiB"))
    args = ["place", "--hosts", str(ROOT / "examples" / "hosts"), "--vm", str(vm)]
    done = subprocess.run(
        [sys.executable, "-m", "nfvplace", *(args if command == "place" else ["lint", str(vm)])],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "NFV203" in done.stdout + done.stderr
