"""`nfvplace.convert`: any descriptor file or document, in nfvplace's own format or in a dialect.

A dialect document is converted to nfvplace's format (a VM Descriptor, a VNF template, or a CHD for
host files), or written back out with `to=` as a Nova flavor, OSM guest-epa, SOL006 or OpenVIM
`numas` where the target can say it. Every field that is not carried, read with an assumption, or
missing is a finding naming its source path (a JSON pointer, or an XPath for XML); an incomplete
document (a flavor by name only, `${...}` placeholders, a VDU without sizes) is still converted.
With `strict=True`, whatever was not carried makes the conversion fail (`ok` is False).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from . import errors
from .dialects.base import ASSUMED, DROPPED, MISSING, Note, json_pointer
from .dialects.sol006_xml import xpath
from .dialects.writers import TARGETS, VNF_WRITERS, WRITERS
from .errors import DescriptorError, Issue
from .lint.gate import gate
from .models.loading import MemberOutsideError, SourceDocument, dump, member_path, parse_document
from .models.vmd import VmDescriptor
from .models.vnf import VnfTemplate
from .reader import list_items, load_document, load_file, read, read_path

FORMATS = ("yaml", "json")
ALL_TARGETS = ("nfvplace", *TARGETS)


@dataclass(frozen=True)
class ConvertFinding:
    """One thing of the source not carried (`dropped`), read with an assumption, or `missing`."""

    path: str
    message: str
    kind: str
    severity: str

    def line(self, source: str) -> str:
        return f"{source}: {self.path or '/'}: {self.severity} [{self.kind}] {self.message}"


@dataclass(frozen=True)
class Converted:
    """The converted document (plain data), the dialect it came from, and the findings."""

    source: str
    dialect: str | None
    target: str
    data: Any
    findings: tuple[ConvertFinding, ...]
    strict: bool = False

    @property
    def ok(self) -> bool:
        """False when `strict` and something was not carried or is missing."""
        return not any(f.severity == "error" for f in self.findings)

    @property
    def complete(self) -> bool:
        return not any(f.kind == MISSING for f in self.findings)

    def text(self, fmt: str = "yaml") -> str:
        if fmt == "json":
            return json.dumps(self.data, indent=2, ensure_ascii=False) + "\n"
        return yaml.safe_dump(self.data, sort_keys=False, allow_unicode=True, width=100)


def _document(source: Any) -> tuple[SourceDocument, Path | None]:
    if isinstance(source, SourceDocument):
        return source, None
    if isinstance(source, str | Path) and not isinstance(source, Mapping):
        return read_path(source), Path(source)
    if isinstance(source, Mapping):
        return SourceDocument(data=dict(source), source="<document>"), None
    raise DescriptorError(
        errors.INPUT_UNKNOWN_KIND,
        f"convert takes a path or a document (a mapping), got {type(source).__name__}",
    )


def _finding(note: Note, xml: bool, strict: bool) -> ConvertFinding:
    path = xpath(note.path) if xml else json_pointer(note.path)
    severity = {DROPPED: "warning", MISSING: "warning", ASSUMED: "info"}.get(note.kind, "warning")
    if strict and note.kind in (DROPPED, MISSING):
        severity = "error"
    return ConvertFinding(path, note.message, note.kind, severity)


def _member_path(template: Path, file: str, index: int) -> Path:
    try:
        return member_path(template.parent, file)
    except MemberOutsideError as exc:
        raise DescriptorError(
            exc.code,
            exc.message,
            file=str(template),
            issues=tuple(replace(i, path=f"members[{index}].file") for i in exc.issues),
        ) from None


def _inline_members(data: dict[str, Any], template: Path | None) -> dict[str, Any]:
    """Members given as files (relative to the template) inlined, in whatever format they are."""
    if template is None or not isinstance(data.get("members"), list):
        return data
    members = []
    for index, member in enumerate(data["members"]):
        if isinstance(member, Mapping) and "file" in member and "descriptor" not in member:
            loaded = load_file(_member_path(template, str(member["file"]), index))
            rest = {k: v for k, v in member.items() if k != "file"}
            member = {**rest, "descriptor": json.loads(dump(loaded, "json"))}
        members.append(member)
    return {**data, "members": members}


def convert(source: Any, to: str = "nfvplace", strict: bool = False) -> Converted:
    """Convert a file (path) or a parsed document to nfvplace's format or to `to`.

    Raises `DescriptorError` for what cannot be read at all (syntax, a value outside the
    dialect's vocabulary, an unknown target), and `LintError` for a descriptor lint refuses
    when `to` is a dialect (its writer would write what its own reader refuses).
    """
    if to not in ALL_TARGETS:
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"unknown target {to!r}",
            issues=(Issue("unknown --to", path="to", hint=f"use one of {', '.join(ALL_TARGETS)}"),),
        )
    document, path = _document(source)
    items = list_items(document)
    if items is not None:
        return _convert_list(document, items, to, strict)
    reading = read(document)
    xml = document.source.endswith(".xml")
    findings = [_finding(n, xml, strict) for n in reading.notes]
    data = reading.data
    if isinstance(data, dict):
        data = _inline_members(data, path)
    if reading.conversion is None or not any(n.kind == MISSING for n in reading.notes):
        model = (
            load_document(document)
            if data is reading.data
            else parse_document(SourceDocument(data=data, source=document.source))
        )
        data = json.loads(dump(model, "json"))
        if to != "nfvplace":
            data, written = _write(model, to, document.source)
            findings.extend(_finding(n, False, strict) for n in written)
    elif to != "nfvplace":
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"cannot write {to}: the document does not say everything placement needs",
            file=document.source,
            issues=tuple(
                Issue(n.message, path=json_pointer(n.path))
                for n in reading.notes
                if n.kind == MISSING
            ),
        )
    return Converted(document.source, reading.dialect, to, data, tuple(findings), strict)


def _convert_list(
    document: SourceDocument, items: list[SourceDocument], to: str, strict: bool
) -> Converted:
    """A Kubernetes List: each item converted; the data is the list of them, the findings' paths
    point into the List (`/items/<n>/...`)."""
    converted = [convert(item, to=to, strict=strict) for item in items]
    findings = tuple(
        replace(f, path=f"/items/{index}{f.path}")
        for index, one in enumerate(converted)
        for f in one.findings
    )
    dialect = converted[0].dialect if converted else None
    data = [one.data for one in converted]
    return Converted(document.source, dialect, to, data, findings, strict)


def _write(model: Any, to: str, source: str) -> tuple[Any, list[Note]]:
    """`model` written as `to`; `LintError` when lint refuses it (a dialect's writer, like a
    renderer, assumes a descriptor lint passes: one that contradicts itself, e.g. a top-level
    `vcpus` other than its cpu-sets' count, would be written as a document its reader refuses)."""
    if isinstance(model, VmDescriptor | VnfTemplate):
        gate(model, f"descriptor written as {to}")
    if isinstance(model, VnfTemplate) and to in VNF_WRITERS:
        _check_inlined(model, source)
        data, notes = VNF_WRITERS[to](model)
        return data, [Note(n.path, f"(VNF template field) {n.message}", n.kind) for n in notes]
    if not isinstance(model, VmDescriptor):
        several = " or a VNF template" if to in VNF_WRITERS else ""
        raise DescriptorError(
            errors.INPUT_UNKNOWN_KIND,
            f"--to {to} writes one VM Descriptor{several}; this document is a "
            f"{type(model).__name__}",
            file=source,
            issues=(
                Issue(
                    "wrong kind",
                    hint=f"convert to nfvplace; --to {', '.join(VNF_WRITERS)} write VNF templates",
                ),
            ),
        )
    data, notes = WRITERS[to](model)
    return data, [Note(n.path, f"(VM Descriptor field) {n.message}", n.kind) for n in notes]


def _check_inlined(vnf: VnfTemplate, source: str) -> None:
    """A writer needs every member's descriptor: members given as files are inlined only when
    the template is read from a file (a document sent over HTTP has no directory to read)."""
    files = [
        Issue(
            f"member {m.name!r} is given as a file ({m.file})",
            path=f"/members/{index}/file",
            hint="inline the member's VM Descriptor under 'descriptor'",
        )
        for index, m in enumerate(vnf.members)
        if m.descriptor is None
    ]
    if files:
        raise DescriptorError(
            errors.INPUT_REFERENCE,
            "cannot write the VNF template: members given as files are not read here",
            file=source,
            issues=tuple(files),
        )


__all__ = ["ALL_TARGETS", "FORMATS", "ConvertFinding", "Converted", "convert"]
