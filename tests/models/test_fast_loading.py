"""The fast reader (`parse_text_fast`, used for files) says exactly what the line-tracking one says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import nfvplace
from nfvplace import errors
from nfvplace.errors import DescriptorError
from nfvplace.models import dump, parse_document, parse_text
from nfvplace.models.loading import SourceDocument, parse_text_fast, read_document

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.yaml"))


def outcome(parse: Any, text: str) -> tuple[str, Any]:
    try:
        return "ok", parse(text, "doc").data
    except DescriptorError as exc:
        return exc.code, [(i.message, i.line, i.path) for i in exc.issues or ()]


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, indent=st.sampled_from([None, 2, "\t"]), ascii_only=st.booleans())
def test_json_reads_as_yaml_reads_it(value: Any, indent: Any, ascii_only: bool) -> None:
    text = json.dumps({"v": value}, indent=indent, ensure_ascii=ascii_only)
    assert outcome(parse_text_fast, text) == outcome(parse_text, text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1e5, "b": 1.5E-3, "c": 2.0}',  # YAML 1.1 reads exponents without a dot as strings
        '{"a": NaN}',
        '{"a": 1, "a": 2}',
        '{"a": "\\u0085 \\ud83d\\ude00"}',
        '{"a": "\x7f"}',
        '{"a": 1,}',
        '{\n\t"a": 1\n}',
        '["x", {"y": [1, 2, {"z": null}]}]',
        "schema: nfvplace/vmd/v1\nname: on\nlist: [1, 2]\n",
        "a: &a [1, 2]\nb: *a\nc: {<<: {x: 1}}\n",
        "!!python/object/apply:os.system ['true']\n",
        "a: [1, 2\n",
        "",
        "# only a comment\n",
    ],
)
def test_edge_cases_read_the_same(text: str) -> None:
    assert outcome(parse_text_fast, text) == outcome(parse_text, text)


def test_alias_bomb_is_refused_without_expanding() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        prev, cur = chr(ord("a") + level - 1), chr(ord("a") + level)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(DescriptorError) as info:
        parse_text_fast("\n".join(lines) + "\n")
    assert info.value.code == errors.INPUT_UNSAFE


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_read_the_same_with_the_same_lines(path: Path) -> None:
    text = path.read_text()
    fast, slow = read_document(path), parse_text(text, str(path))
    assert fast.data == slow.data
    assert dict(fast.lines) == dict(slow.lines)


def test_lines_are_worked_out_only_when_asked(tmp_path: Path) -> None:
    vm = nfvplace.load(ROOT / "examples" / "vms" / "nfv-per-001-figure8.yaml")
    path = tmp_path / "vm.json"
    path.write_text(dump(vm, "json"))
    document = read_document(path)
    assert isinstance(document, SourceDocument)
    assert type(document.lines).__name__ == "_LazyLines"
    assert document.line_of(("cpu_sets", 0)) == parse_text(path.read_text()).line_of(
        ("cpu_sets", 0)
    )


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_invalid_file_errors_keep_their_lines(tmp_path: Path, fmt: str) -> None:
    vm = nfvplace.load(ROOT / "examples" / "vms" / "nfv-per-001-figure8.yaml")
    text = dump(vm, fmt).replace("memory_mib", "memory_mb", 1)
    path = tmp_path / f"vm.{fmt}"
    path.write_text(text)
    with pytest.raises(DescriptorError) as fast:
        nfvplace.load(path)
    with pytest.raises(DescriptorError) as slow:
        parse_document(parse_text(text, str(path)))
    assert fast.value.code == slow.value.code == errors.INPUT_INVALID
    assert fast.value.issues == slow.value.issues
    assert any(issue.line for issue in fast.value.issues or ())


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, flow=st.sampled_from([None, True, False]))
def test_yaml_reads_as_pure_python_yaml_reads_it(value: Any, flow: bool | None) -> None:
    text = yaml.dump({"v": value}, Dumper=yaml.SafeDumper, default_flow_style=flow)
    assert outcome(parse_text_fast, text) == outcome(parse_text, text)


@pytest.mark.parametrize("reader", [parse_text_fast, parse_text])
def test_a_number_of_over_4300_digits_is_named_in_our_words(reader: Any) -> None:
    with pytest.raises(DescriptorError) as info:
        reader('{"schema": "nfvplace/vmd/v1", "name": "x", "vcpus": ' + "9" * 5000 + "}")
    assert info.value.code == errors.INPUT_SYNTAX
    assert "more than 4,300 digits" in str(info.value)
    assert "set_int_max_str_digits" not in str(info.value)
