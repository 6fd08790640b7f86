"""Reading descriptor text safely into a `SourceDocument`: plain data plus every field's line.

YAML is read with PyYAML's safe loader (no object tags), documents are bounded in size, and alias
expansion is bounded so that a "billion laughs" document is refused instead of exhausting memory.
Every node keeps its line so that errors and lint findings can point into the source. Plain JSON
takes a faster road (`parse_text_fast`) to the same data, limits and errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .. import errors
from ..errors import DescriptorError, Issue
from .json_bounds import within_json_bounds

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
MAX_EXPANDED_NODES = 1_000_000
# Nodes (scalars, sequences, mappings; an alias counts once) of one document, and how deep they nest.
# The largest real CHD here (192 PUs on 24 NUMA nodes, from hwloc) has about 5,400 nodes; within these
# bounds any accepted document parses in well under a second and a hundred MiB.
MAX_NODES = 50_000
MAX_DEPTH = 64
PathKey = tuple[str | int, ...]


def format_path(path: Sequence[str | int]) -> str:
    """`("numa_nodes", 0, "cpus", 3, "id")` -> `numa_nodes[0].cpus[3].id`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_path(dotted: str) -> PathKey:
    """`numa_nodes[0].cpus[3].id` -> `("numa_nodes", 0, "cpus", 3, "id")` (format_path's inverse)."""
    return tuple(int(index) if index else name for name, index in _STEP.findall(dotted))


@dataclass(frozen=True)
class SourceDocument:
    """A parsed file: plain data plus the source line of every field path."""

    data: Any
    source: str
    lines: Mapping[PathKey, int] = field(default_factory=dict)

    def line_of(self, path: Sequence[str | int]) -> int | None:
        """Line of the deepest prefix of `path` that has one."""
        key = tuple(path)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return self.lines.get((), None)


class _BoundedSafeLoader(yaml.SafeLoader):
    """Safe loader; the YAML 1.1 `on`/`off` booleans and `<<` merges behave as PyYAML's."""


try:  # libyaml's C parser under PyYAML's own safe constructor: the same data, much sooner
    from yaml import CSafeLoader as _FastSafeLoader

    _LIBYAML = True
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _FastSafeLoader = yaml.SafeLoader  # type: ignore[misc,assignment]
    _LIBYAML = False


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # guards against recursive aliases
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    memo[key] = size
    return size


def _record_lines(
    node: yaml.Node, path: PathKey, lines: dict[PathKey, int], seen: set[int]
) -> None:
    if id(node) in seen:  # an alias: its lines are those of the anchor
        return
    seen.add(id(node))
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                child = (*path, key_node.value)
                lines.setdefault(child, key_node.start_mark.line + 1)
                _record_lines(value_node, child, lines, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, (*path, index), lines, seen)


def _check_size(text: str, source: str) -> None:
    if len(text) * 4 > MAX_DOCUMENT_BYTES and (
        len(text.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES
    ):
        raise DescriptorError(
            errors.INPUT_TOO_LARGE,
            f"document is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB",
            file=source,
        )


_NODE_EVENTS = (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)
_OPEN_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE_EVENTS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _check_shape(text: str, source: str) -> None:
    """Refuse, before anything is built, a document of more than `MAX_NODES` nodes or nested
    deeper than `MAX_DEPTH` (libyaml's parser streams the events; nothing is kept). Syntax errors
    pass: the reader that follows reports them with its own words."""
    nodes = depth = 0
    try:
        for event in yaml.parse(text, Loader=_FastSafeLoader):
            if isinstance(event, _NODE_EVENTS):
                nodes += 1
                if nodes > MAX_NODES:
                    raise _too_many(source)
            if isinstance(event, _OPEN_EVENTS):
                depth += 1
                if depth > MAX_DEPTH:
                    raise too_deep(source)
            elif isinstance(event, _CLOSE_EVENTS):
                depth -= 1
    except yaml.YAMLError as exc:
        # libyaml (bundled with PyYAML 6.0.4 and later) scans ahead and stops at 1,000 levels of
        # nesting before the events reach our own limit: the same refusal, not a syntax error for
        # the pure-Python reader to rediscover slowly
        if "nesting depth" in str(exc):
            raise too_deep(source) from exc
        return


def _too_many(source: str) -> DescriptorError:
    return DescriptorError(
        errors.INPUT_TOO_LARGE,
        f"document has more than {MAX_NODES:,} values (YAML/JSON nodes)",
        file=source,
        issues=(Issue("too many values", hint="split the document"),),
    )


def too_deep(source: str) -> DescriptorError:
    return DescriptorError(
        errors.INPUT_UNSAFE,
        f"document nests deeper than {MAX_DEPTH} levels",
        file=source,
        issues=(Issue("nested too deep", hint="flatten the document"),),
    )


def _compose(
    loader_class: type[yaml.SafeLoader | yaml.CSafeLoader], text: str, source: str
) -> tuple[Any, Any]:
    """(root node, data) of a YAML text, refusing alias bombs; the loader's own errors pass."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        if _expanded_size(node, {}) > MAX_EXPANDED_NODES:
            raise DescriptorError(
                errors.INPUT_UNSAFE,
                f"document expands to more than {MAX_EXPANDED_NODES} nodes through aliases",
                file=source,
                issues=(Issue("alias expansion too large", hint="remove YAML anchors/aliases"),),
            )
        return node, loader.construct_document(node)
    finally:
        loader.dispose()


def parse_text(text: str, source: str = "<string>") -> SourceDocument:
    """Parse YAML or JSON text (JSON is YAML) into a SourceDocument with every field's line, safely.

    libyaml's C parser composes the nodes (lines included) under PyYAML's own safe constructor; a
    text it refuses, or one with tabs (which libyaml accepts in places PyYAML does not), is read by
    PyYAML's pure-Python parser, so that every error is PyYAML's, with its line."""
    _check_size(text, source)
    _check_shape(text, source)
    node: Any = None
    if "\t" not in text and _LIBYAML:
        try:
            node, data = _compose(_FastSafeLoader, text, source)
        except DescriptorError:
            raise
        except (yaml.YAMLError, RecursionError, ValueError, TypeError):
            node = None
        else:
            return _with_lines(node, data, source)
    try:
        node, data = _compose(_BoundedSafeLoader, text, source)
    except DescriptorError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else None
        raise DescriptorError(
            errors.INPUT_SYNTAX,
            "not valid YAML or JSON",
            file=source,
            issues=(Issue(str(exc.problem or exc), line=line, hint="fix the syntax at that line"),),
        ) from exc
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        raise DescriptorError(
            errors.INPUT_SYNTAX, f"not valid YAML or JSON: {parse_problem(exc)}", file=source
        ) from exc
    return _with_lines(node, data, source)


def parse_problem(exc: BaseException) -> str:
    """What a parser's exception says, in the reader's words (not Python's own advice)."""
    text = str(exc)
    if "integer string conversion" in text:  # Python refuses integers of over 4,300 digits
        return "a number has more than 4,300 digits (no field of a descriptor holds one)"
    return text


def _with_lines(node: Any, data: Any, source: str) -> SourceDocument:
    lines: dict[PathKey, int] = {}
    if node is not None:
        _record_lines(node, (), lines, set())
    return SourceDocument(data=data, source=source, lines=lines)


class _LazyLines(Mapping[PathKey, int]):
    """The line table of a text, worked out (by `parse_text`) only when something asks for a line."""

    def __init__(self, text: str, source: str) -> None:
        self._text: str | None = text
        self._source = source
        self._table: Mapping[PathKey, int] = {}

    def _lines(self) -> Mapping[PathKey, int]:
        if self._text is not None:
            text, self._text = self._text, None
            try:
                self._table = parse_text(text, self._source).lines
            except DescriptorError:  # pragma: no cover - the fast reader accepted it
                self._table = {}
        return self._table

    def __getitem__(self, key: PathKey) -> int:
        return self._lines()[key]

    def __iter__(self) -> Iterator[PathKey]:
        return iter(self._lines())

    def __len__(self) -> int:
        return len(self._lines())


class _NotPlainJsonError(ValueError):
    """JSON that PyYAML would read differently (e.g. `1e5` is a string to YAML 1.1)."""


def _yaml_float(text: str) -> float:
    if "e" in text or "E" in text:
        raise _NotPlainJsonError(text)
    return float(text)


def _refuse_constant(text: str) -> Any:
    raise _NotPlainJsonError(text)


_NOT_JSON = object()


def _plain_json(text: str) -> Any:
    """The data of a JSON text that PyYAML would read the same way, or `_NOT_JSON`.

    Only ASCII text without DEL or `\\u` escapes (which may spell characters YAML refuses or
    folds): everything else, and any JSON the json module refuses, is left to the YAML reader.
    The json module itself refuses raw control characters inside strings.
    """
    if not text.isascii() or "\x7f" in text or "\\u" in text:
        return _NOT_JSON
    if not text.lstrip(" \r\n").startswith(("{", "[")):
        return _NOT_JSON
    try:
        return json.loads(text, parse_float=_yaml_float, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return _NOT_JSON


def check_json_shape(data: Any, source: str) -> None:
    """`MAX_NODES` and `MAX_DEPTH` for a document the json module read (no YAML events to count):
    counted a level at a time first (`within_json_bounds`), else walked node by node, so that a
    document over both bounds is refused for the one the walk meets first."""
    if within_json_bounds(data, MAX_NODES, MAX_DEPTH):
        return
    stack = [(data, 1)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise _too_many(source)
        if depth > MAX_DEPTH:
            raise too_deep(source)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
            nodes += len(item)  # the keys
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def parse_text_fast(text: str, source: str = "<string>") -> SourceDocument:
    """`parse_text`, fast: the same data, limits and errors; lines worked out only when asked for.

    JSON goes through the json module, YAML through libyaml's C parser (under PyYAML's safe
    constructor, alias expansion bounded as in `parse_text`). A document either reader refuses
    is read again by `parse_text`, so that its errors are exactly that reader's, with lines; so is
    a text with tabs, which libyaml accepts in places where PyYAML does not.
    """
    _check_size(text, source)
    if "\t" in text:
        return parse_text(text, source)
    data = _plain_json(text)
    if data is not _NOT_JSON:
        check_json_shape(data, source)
    if data is _NOT_JSON:
        _check_shape(text, source)
        try:
            _, data = _compose(_FastSafeLoader, text, source)
        except DescriptorError:
            raise
        except (yaml.YAMLError, RecursionError, ValueError, TypeError):
            return parse_text(text, source)
    return SourceDocument(data=data, source=source, lines=_LazyLines(text, source))


def read_document(path: str | Path) -> SourceDocument:
    """Read and parse one file."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise DescriptorError(
                errors.INPUT_TOO_LARGE,
                f"file is {size} bytes, more than the {MAX_DOCUMENT_BYTES} allowed",
                file=str(path),
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise DescriptorError(
            errors.INPUT_UNREADABLE, f"cannot read file: {exc.strerror or exc}", file=str(path)
        ) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DescriptorError(
            errors.INPUT_UNREADABLE,
            f"not UTF-8 text (byte {exc.start})",
            file=str(path),
            issues=(Issue("binary or wrongly encoded file", hint="save the file as UTF-8"),),
        ) from exc
    return parse_text_fast(text, str(path))
