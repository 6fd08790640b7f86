from __future__ import annotations

from pathlib import Path

import pytest

import nfvplace
from nfvplace import errors
from nfvplace.errors import DescriptorError
from nfvplace.models import VmDescriptor, dump, parse_document, parse_text

FIGURE8 = Path(__file__).resolve().parents[2] / "examples" / "vms" / "nfv-per-001-figure8.yaml"


def test_figure8_loads_with_units() -> None:
    vm = nfvplace.load(FIGURE8)
    assert isinstance(vm, VmDescriptor)
    assert vm.total_vcpus == 14
    assert vm.cpu_sets[0].hugepages is not None
    assert vm.cpu_sets[0].hugepages.size_kib == 1024 * 1024
    assert vm.cpu_sets[0].interfaces[1].bandwidth_gbps == 5


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_round_trip_is_exact(fmt: str) -> None:
    vm = nfvplace.load(FIGURE8)
    assert isinstance(vm, VmDescriptor)
    again = parse_document(parse_text(dump(vm, fmt)))
    assert again == vm
    assert dump(again, fmt) == dump(vm, fmt)


def test_unknown_field_names_file_line_and_suggestion() -> None:
    text = (
        "schema: nfvplace/vmd/v1\nname: x\nvcpus: 2\nmemory_mib: 1024\ncpu_oversubscriptin: true\n"
    )
    with pytest.raises(DescriptorError) as info:
        parse_document(parse_text(text, "vm.yaml"))
    err = info.value
    assert err.code == errors.INPUT_INVALID
    assert err.file == "vm.yaml"
    (issue,) = err.issues
    assert issue.path == "cpu_oversubscriptin"
    assert issue.line == 5
    assert issue.hint == "did you mean 'cpu_oversubscription'?"


def test_unknown_schema_suggests_the_closest() -> None:
    with pytest.raises(DescriptorError) as info:
        parse_document(parse_text("schema: nfvplace/vmd/v2\nname: x\n"))
    assert info.value.code == errors.INPUT_UNKNOWN_KIND
    assert "nfvplace/vmd/v1" in (info.value.issues[0].hint or "")


def test_python_tags_are_refused() -> None:
    with pytest.raises(DescriptorError) as info:
        parse_text("!!python/object/apply:os.system ['true']\n")
    assert info.value.code == errors.INPUT_SYNTAX


def test_alias_bomb_is_refused() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        prev = chr(ord("a") + level - 1)
        cur = chr(ord("a") + level)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(DescriptorError) as info:
        parse_text("\n".join(lines) + "\n")
    assert info.value.code == errors.INPUT_UNSAFE


def test_folder_load_is_sorted(tmp_path: Path) -> None:
    for name in ("b", "a"):
        (tmp_path / f"{name}.yaml").write_text(
            f"schema: nfvplace/vmd/v1\nname: {name}\nvcpus: 1\nmemory_mib: 512\n"
        )
    (tmp_path / "notes.txt").write_text("ignored")
    loaded = nfvplace.load(tmp_path)
    assert isinstance(loaded, list)
    assert [d.name for d in loaded if isinstance(d, VmDescriptor)] == ["a", "b"]


def test_unreadable_file_has_a_code(tmp_path: Path) -> None:
    with pytest.raises(DescriptorError) as info:
        nfvplace.load(tmp_path / "missing.yaml")
    assert info.value.code == errors.INPUT_UNREADABLE
    bad = tmp_path / "bin.yaml"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(DescriptorError) as info:
        nfvplace.load(bad)
    assert info.value.code == errors.INPUT_UNREADABLE
