"""Reading descriptor files safely and turning them into typed models.

YAML is read with PyYAML's safe loader (no object tags), documents are bounded in size, and alias
expansion is bounded so that a "billion laughs" document is refused instead of exhausting memory.
Every node keeps its line so that errors and lint findings can point into the source.
"""

from __future__ import annotations

import difflib
import gc
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .. import errors
from ..errors import DescriptorError, Issue
from .chd import CHD_SCHEMA, ComputeHostDescriptor
from .configuration import (
    CONFIGURATION_SCHEMA,
    CONFIGURATIONS_SCHEMA,
    VmConfiguration,
    VmConfigurations,
)
from .vmd import VMD_SCHEMA, VmDescriptor
from .vnf import VNF_SCHEMA, VnfTemplate

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
MAX_EXPANDED_NODES = 1_000_000
# Nodes (scalars, sequences, mappings; an alias counts once) of one document, and how deep they nest.
# The largest real CHD here (192 PUs on 24 NUMA nodes, from hwloc) has about 5,400 nodes; within these
# bounds any accepted document parses in well under a second and a hundred MiB.
MAX_NODES = 50_000
MAX_DEPTH = 64
DESCRIPTOR_SUFFIXES = (".yaml", ".yml", ".json")

Descriptor = ComputeHostDescriptor | VmDescriptor | VnfTemplate | VmConfiguration | VmConfigurations

KINDS: dict[str, type[BaseModel]] = {
    CHD_SCHEMA: ComputeHostDescriptor,
    VMD_SCHEMA: VmDescriptor,
    VNF_SCHEMA: VnfTemplate,
    CONFIGURATION_SCHEMA: VmConfiguration,
    CONFIGURATIONS_SCHEMA: VmConfigurations,
}

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
    """`MAX_NODES` and `MAX_DEPTH` for a document the json module read (no YAML events to count)."""
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


def kind_of(data: Any) -> str | None:
    if isinstance(data, Mapping):
        schema = data.get("schema")
        if isinstance(schema, str):
            return schema
    return None


def model_for(data: Any, source: str = "<string>") -> type[BaseModel]:
    """The model class for a document, from its `schema:` line."""
    schema = kind_of(data)
    if schema in KINDS:
        return KINDS[schema]
    known = ", ".join(KINDS)
    if not isinstance(data, Mapping):
        raise DescriptorError(
            errors.INPUT_UNKNOWN_KIND,
            "a descriptor must be a mapping",
            file=source,
            issues=(
                Issue("top level is not a mapping", hint=f"start with 'schema: {VMD_SCHEMA}'"),
            ),
        )
    if schema is None:
        raise DescriptorError(
            errors.INPUT_UNKNOWN_KIND,
            "document has no 'schema:' field",
            file=source,
            issues=(
                Issue("missing field", path="schema", hint=f"add 'schema:' naming one of {known}"),
            ),
        )
    close = difflib.get_close_matches(schema, list(KINDS), n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"use one of {known}"
    raise DescriptorError(
        errors.INPUT_UNKNOWN_KIND,
        f"unknown schema {schema!r}",
        file=source,
        issues=(Issue(f"unknown schema {schema!r}", path="schema", hint=hint),),
    )


def _field_names(model: type[BaseModel]) -> list[str]:
    names = []
    for name, info in model.model_fields.items():
        names.append(info.alias or name)
    return names


def _model_at(model: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """Follow a validation location through nested models to the model that holds its last key."""
    import typing

    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int) or not (
            isinstance(current, type) and issubclass(current, BaseModel)
        ):
            continue
        info = next((f for n, f in current.model_fields.items() if part in (n, f.alias)), None)
        if info is None:
            return None
        current = info.annotation
        # unwrap Optional / tuple[...] / dict[...]
        for _ in range(4):
            args = [
                a for a in typing.get_args(current) if a is not type(None) and a is not Ellipsis
            ]
            models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
            if models:
                current = models[0]
                break
            if args:
                current = args[-1]
            else:
                break
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    return None


_PYDANTIC_TAG = re.compile(r"^(\[key\]|[a-z][a-z0-9_-]*\[.+\])$")
"""Union and validator tags pydantic adds to error locations, e.g. `function-after[f(), M]`."""


_NO_DATA = object()


def error_location(raw: Sequence[Any], data: Any = _NO_DATA) -> PathKey:
    """A pydantic error location as a path into the document, without pydantic's own tags.

    With the document's data, a step is kept when it exists there (so a user's key such as
    `a[b]` survives); without it, steps that look like tags are dropped.
    """
    out: list[str | int] = []
    node = data
    for step in raw:
        if not isinstance(step, str | int):
            continue
        in_mapping = isinstance(node, Mapping) and step in node
        in_list = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        if in_mapping or in_list:
            out.append(step)
            node = node[step]
        elif isinstance(step, str) and _PYDANTIC_TAG.match(step):
            continue
        else:
            out.append(step)
            node = _NO_DATA
    return tuple(out)


def validation_issues(
    exc: ValidationError, model: type[BaseModel], document: SourceDocument | None = None
) -> tuple[Issue, ...]:
    """Readable issues from a pydantic ValidationError, with lines and 'did you mean' hints."""
    issues = []
    for err in exc.errors(include_url=False):
        # pydantic adds union/validator tags such as 'function-after[...]' to locations
        loc = error_location(err["loc"], document.data if document else _NO_DATA)
        path = format_path(loc)
        line = document.line_of(loc) if document else None
        message = err["msg"]
        hint: str | None = None
        if err["type"] == "extra_forbidden":
            holder = _model_at(model, loc)
            candidates = _field_names(holder) if holder else []
            name = str(loc[-1]) if loc else ""
            close = difflib.get_close_matches(name, candidates, n=1)
            message = f"unknown field '{name}'"
            hint = f"did you mean '{close[0]}'?" if close else "remove it"
        elif err["type"] == "enum":
            expected = err.get("ctx", {}).get("expected", "")
            given = str(err.get("input"))
            options = [o.strip(" '") for o in expected.replace(" or ", ",").split(",") if o.strip()]
            close = difflib.get_close_matches(given, options, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"use one of {expected}"
        elif err["type"] == "missing":
            message = f"required field '{loc[-1]}' is missing" if loc else message
            hint = "add it"
        elif err["type"] == "literal_error":
            hint = f"use {err.get('ctx', {}).get('expected', '')}"
        elif message.startswith("Value error, "):
            message = message.removeprefix("Value error, ")
        issues.append(Issue(message=message, path=path, line=line, hint=hint))
    return tuple(issues)


def parse_document(document: SourceDocument) -> Descriptor:
    """Validate a parsed document into its model; raises DescriptorError naming every problem."""
    model = model_for(document.data, document.source)
    try:
        parsed = model.model_validate(document.data)
    except ValidationError as exc:
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"invalid {kind_of(document.data)} document",
            file=document.source,
            issues=validation_issues(exc, model, document),
        ) from exc
    assert isinstance(parsed, Descriptor)
    return parsed


def _load_own(path: Path) -> Descriptor:
    return parse_document(read_document(path))


def resolve_members(
    template: VnfTemplate,
    base: Path,
    source: str,
    load_member: Callable[[Path], Descriptor] = _load_own,
) -> VnfTemplate:
    """The template with each member given as a file (relative to `base`) loaded inline."""
    members = []
    for index, member in enumerate(template.members):
        if member.descriptor is None and member.file is not None:
            target = (base / member.file).resolve()
            try:
                loaded = load_member(target)
            except DescriptorError as exc:
                raise DescriptorError(
                    errors.INPUT_REFERENCE,
                    f"member '{member.name}' refers to {member.file}, which cannot be loaded",
                    file=source,
                    issues=(
                        Issue(
                            str(exc), path=f"members[{index}].file", hint="fix the path or the file"
                        ),
                    ),
                ) from exc
            if not isinstance(loaded, VmDescriptor):
                raise DescriptorError(
                    errors.INPUT_REFERENCE,
                    f"member '{member.name}' refers to {member.file}, which is not a VM Descriptor",
                    file=source,
                    issues=(Issue("wrong kind", path=f"members[{index}].file"),),
                )
            member = member.model_copy(update={"descriptor": loaded})
        members.append(member)
    return template.model_copy(update={"members": tuple(members)})


def iter_descriptor_files(
    folder: Path, suffixes: Sequence[str] = DESCRIPTOR_SUFFIXES
) -> Iterator[Path]:
    """Descriptor files under a folder (by suffix), sorted, skipping hidden entries."""
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and path.suffix.lower() in suffixes:
            yield path


def parse_own_file(path: str | Path) -> Descriptor:
    """Parse one file in nfvplace's own format; VNF template members given as files are parsed too.

    Internal: the public loader is `nfvplace.load` (`nfvplace.reader.load`), which also reads every
    vendor dialect and folders; it sits above the models.
    """
    path = Path(path)
    descriptor = parse_document(read_document(path))
    if isinstance(descriptor, VnfTemplate):
        descriptor = resolve_members(descriptor, path.parent, str(path))
    return descriptor


@contextmanager
def gc_paused() -> Iterator[None]:
    """Cyclic garbage collection paused while many descriptors are built.

    A fleet's descriptors are hundreds of thousands of small objects and hold no reference cycles;
    collecting again and again while they pile up costs several times the loading itself.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def dump(model: BaseModel, fmt: str = "yaml") -> str:
    """Serialise a model to YAML or JSON; loading the text gives back an equal model."""
    data = model.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    if "schema" not in data and "schema_" in type(model).model_fields:
        data = {"schema": type(model).model_fields["schema_"].default, **data}
    elif "schema" in data:
        data = {"schema": data.pop("schema"), **data}
    if fmt == "json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        # We read JSON as YAML: escape what YAML refuses raw (controls) or folds (NEL, LS, PS).
        return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    data = _int_pin_keys(data)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    if _YAML_UNSAFE.search(text):  # e.g. U+0085 (NEL) is a line break to YAML: escape it all
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=False, width=100)
    return text


_YAML_UNSAFE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)


def _int_pin_keys(data: Any) -> Any:
    """JSON mode turns `vcpu_pins` keys into strings; YAML can keep them as the integers they are."""
    if isinstance(data, dict):
        return {
            k: ({int(pk): pv for pk, pv in v.items()} if k == "vcpu_pins" else _int_pin_keys(v))
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [_int_pin_keys(item) for item in data]
    return data
