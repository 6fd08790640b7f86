"""One reader for every file nfvplace accepts: its own format or any vendor dialect.

It sits above `models/` (nfvplace's own format) and `dialects/` (the vendor readers): a document
with a `schema:` line is parsed by the models, anything else is given to the dialect that
recognises it and the result parsed by the models. Errors of a dialect document point at the
vendor's file, field and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import errors
from .dialects import DialectError, convert, detect, sol006_xml
from .dialects.base import Conversion, Note, json_pointer
from .dialects.kubernetes import list_items as kubernetes_items
from .errors import DescriptorError, Issue
from .models.loading import (
    Descriptor,
    SourceDocument,
    format_path,
    gc_paused,
    iter_descriptor_files,
    kind_of,
    parse_document,
    parse_text,
    read_document,
    resolve_members,
)
from .models.vnf import VnfTemplate

HINT = "fix the field, or write the descriptor in nfvplace's own format ('nfvplace convert')"


@dataclass(frozen=True)
class Reading:
    """What one document says, in nfvplace's own format (plain data), and how it was read."""

    data: Any
    dialect: str | None = None
    conversion: Conversion | None = None

    @property
    def notes(self) -> tuple[Note, ...]:
        return self.conversion.notes if self.conversion is not None else ()


def is_dialect(data: Any) -> bool:
    """True when the document has no `schema:` and a dialect recognises it."""
    return kind_of(data) is None and isinstance(data, Mapping) and detect(data) is not None


def read(document: SourceDocument) -> Reading:
    """The document in nfvplace's own format, converting a dialect; raises DescriptorError."""
    if not is_dialect(document.data):
        return Reading(document.data)
    dialect = detect(document.data)
    try:
        conversion = convert(document.data)
    except DialectError as exc:
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"cannot convert from {dialect}",
            file=document.source,
            issues=(
                Issue(
                    str(exc),
                    path=format_path(exc.path),
                    line=document.line_of(exc.path),
                    hint=HINT,
                ),
            ),
        ) from exc
    return Reading(conversion.data, dialect, conversion)


def missing_issues(reading: Reading, document: SourceDocument) -> tuple[Issue, ...]:
    """One issue per thing placement needs that the dialect document does not say."""
    return tuple(
        Issue(
            note.message,
            path=format_path(note.path) or json_pointer(note.path),
            line=document.line_of(note.path),
            hint="give the value in the file, or convert it and complete the descriptor",
        )
        for note in reading.notes
        if note.kind == "missing"
    )


def load_document(document: SourceDocument) -> Descriptor:
    """A typed descriptor from a parsed document in nfvplace's format or any dialect."""
    reading = read(document)
    if reading.conversion is None:
        return parse_document(document)
    missing = missing_issues(reading, document)
    if missing:
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"the {reading.dialect} document does not say everything placement needs",
            file=document.source,
            issues=missing,
        )
    try:
        return parse_document(SourceDocument(data=reading.data, source=document.source))
    except DescriptorError as exc:
        raise _at_source(exc, reading.conversion, document) from exc


def _at_source(exc: DescriptorError, conversion: Conversion, document: SourceDocument) -> Exception:
    """The converted document's validation errors, moved to the vendor file's fields and lines."""
    issues = []
    for issue in exc.issues or ():
        origin = _origin(conversion, issue.path)
        issues.append(
            Issue(
                f"{issue.path}: {issue.message}" if issue.path else issue.message,
                path=format_path(origin),
                line=document.line_of(origin),
                hint=issue.hint,
            )
        )
    return DescriptorError(exc.code, exc.message, file=document.source, issues=tuple(issues))


def _origin(conversion: Conversion, dotted: str | None) -> tuple[str | int, ...]:
    import re

    steps: list[str | int] = []
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", dotted or ""):
        steps.append(int(index) if index else name)
    return conversion.origin_of(steps)


def read_path(path: str | Path) -> SourceDocument:
    """Read and parse one file: YAML or JSON, or SOL006 XML (parsed safely)."""
    path = Path(path)
    if path.suffix.lower() != ".xml":
        return read_document(path)
    try:
        raw = path.read_bytes()[: sol006_xml.MAX_XML_BYTES + 1]
        text = raw.decode("utf-8")
    except OSError as exc:
        raise DescriptorError(
            errors.INPUT_UNREADABLE, f"cannot read file: {exc.strerror or exc}", file=str(path)
        ) from exc
    except UnicodeDecodeError as exc:
        raise DescriptorError(
            errors.INPUT_UNREADABLE, f"not UTF-8 text (byte {exc.start})", file=str(path)
        ) from exc
    return sol006_xml.parse_text(text, str(path))


def parse_any(text: str, source: str = "<string>") -> SourceDocument:
    """Parse text in any syntax nfvplace reads: YAML, JSON or SOL006 XML."""
    if sol006_xml.looks_like_xml(text):
        return sol006_xml.parse_text(text, source)
    return parse_text(text, source)


def list_items(document: SourceDocument) -> list[SourceDocument] | None:
    """The items of a Kubernetes `List` in a dialect nfvplace reads (`kubectl get ... -o yaml`),
    each a document with its own lines; None for any other document."""
    items = kubernetes_items(document.data)
    if items is None or not is_dialect(document.data):
        return None
    return [
        SourceDocument(
            data=item,
            source=f"{document.source}[items/{index}]",
            lines={k[2:]: v for k, v in document.lines.items() if k[:2] == ("items", index)},
        )
        for index, item in enumerate(items)
    ]


def _read_all(path: Path) -> tuple[list[Descriptor], bool]:
    """The descriptors of one file, and whether it was a Kubernetes List."""
    document = read_path(path)
    items = list_items(document)
    if items is not None:
        return [load_document(item) for item in items], True
    descriptor = load_document(document)
    if isinstance(descriptor, VnfTemplate):
        descriptor = resolve_members(descriptor, path.parent, str(path), load_file)
    return [descriptor], False


def load_all(path: str | Path) -> list[Descriptor]:
    """Every descriptor of one file: one, or each item of a Kubernetes List."""
    return _read_all(Path(path))[0]


def load_file(path: str | Path) -> Descriptor:
    """Load one file in any format; VNF members given as files (in any format) are loaded too."""
    path = Path(path)
    loaded, is_list = _read_all(path)
    if is_list and len(loaded) != 1:
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"a Kubernetes List of {len(loaded)} objects, where one descriptor is expected",
            file=str(path),
            issues=(Issue("a List", path="items", hint="give one object per file"),),
        )
    return loaded[0]


def load(path: str | Path) -> Descriptor | list[Descriptor]:
    """Load a file, or every descriptor file of a folder (sorted by path), in any format; a
    Kubernetes List gives one descriptor per item.

    Raises `DescriptorError` (with a stable `code`, the file, and one issue per problem).
    """
    path = Path(path)
    if path.is_dir():
        with gc_paused():
            return [d for p in iter_descriptor_files(path) for d in load_all(p)]
    loaded, is_list = _read_all(path)
    return loaded if is_list else loaded[0]


__all__ = [
    "Reading",
    "is_dialect",
    "list_items",
    "load",
    "load_all",
    "load_document",
    "load_file",
    "parse_any",
    "read",
    "read_path",
]
