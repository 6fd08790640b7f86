"""The linter's pure core: a parsed document in, findings out.

`lint_document` checks one parsed document of any kind (ours or a vendor dialect); it does no I/O
except through the optional `resolve` function it is given for a VNF template's member files.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..dialects import DialectError, convert, detect
from ..dialects.base import ASSUMED, MISSING, Conversion
from ..dialects.hints import vendor_hint
from ..dialects.kubernetes import list_items
from ..errors import INPUT_SYNTAX, INPUT_UNSAFE, DescriptorError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration, VmConfigurations
from ..models.loading import KINDS, SourceDocument, format_path, kind_of, parse_text
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from . import rules
from .finding import Finding
from .findings import FileResult, Hit, finding_from_hit
from .rules import document as doc_rules
from .rules.vnf import Resolver, check_vnf
from .schema import decimal_unit_hits, validate


def semantic_hits(model: BaseModel, resolve: Resolver | None = None) -> Iterable[Hit]:
    """Every semantic rule for a validated model of any kind."""
    if isinstance(model, VmDescriptor):
        yield from rules.check_vmd(model)
    elif isinstance(model, ComputeHostDescriptor):
        yield from rules.check_chd(model)
    elif isinstance(model, VmConfiguration):
        yield from rules.check_configuration(model)
    elif isinstance(model, VmConfigurations):
        for index, config in enumerate(model.configurations):
            for hit in rules.check_configuration(config):
                yield hit.under(("configurations", index))
    elif isinstance(model, VnfTemplate):
        yield from check_vnf(model, resolve)
        for index, member in enumerate(model.members):
            if member.descriptor is not None:
                for hit in rules.check_vmd(member.descriptor):
                    yield hit.under(("members", index, "descriptor"))


def lint_data(data: Any, resolve: Resolver | None = None) -> tuple[str | None, list[Hit]]:
    """Hits for plain data in one of our kinds: (kind, hits)."""
    checked = _check_data(data, resolve)
    return checked.kind, checked.hits


@dataclass(frozen=True)
class _Checked:
    """One document checked: its kind, its hits, and the model it validated into."""

    kind: str | None
    hits: list[Hit]
    model: BaseModel | None = None


def _check_data(
    data: Any, resolve: Resolver | None, validated: BaseModel | None = None
) -> _Checked:
    """Schema, then rules, on plain data in one of our kinds; `validated`: the model the caller
    already validated `data` into (not validated again)."""
    kind = kind_of(data)
    model_class = KINDS.get(kind or "")
    if model_class is None:
        return _Checked(kind, [_unknown_kind(data, kind)])
    hits = list(decimal_unit_hits(data))
    model, schema = (validated, []) if validated is not None else validate(model_class, data)
    hits.extend(schema)
    if model is not None:
        hits.extend(semantic_hits(model, resolve))
    return _Checked(kind, hits, model)


def _unknown_kind(data: Any, kind: str | None) -> Hit:
    if data is None:
        return doc_rules.UNKNOWN_KIND.hit((), "the document is empty")
    if not isinstance(data, Mapping):
        return doc_rules.UNKNOWN_KIND.hit(
            (), f"a descriptor is a mapping, this document is a {type(data).__name__}"
        )
    if kind is None:
        return doc_rules.UNKNOWN_KIND.hit(
            (), "the document has no 'schema:' and is in no dialect nfvplace reads"
        )
    close = difflib.get_close_matches(kind, list(KINDS), n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"use one of {', '.join(KINDS)}"
    return doc_rules.UNKNOWN_KIND.hit(("schema",), f"unknown schema '{kind}'", hint)


def _check_conversion(conversion: Conversion, resolve: Resolver | None) -> _Checked:
    """The converted document checked, its hits moved to the paths of the vendor's file."""
    out = [
        doc_rules.DIALECT.hit(
            (),
            f"read as {conversion.dialect}; checked as {conversion.data.get('schema')}",
            "",
        )
    ]
    rule_of = {
        ASSUMED: doc_rules.DIALECT_ASSUMED,
        MISSING: doc_rules.DIALECT_MISSING,
    }
    schema = str(conversion.data.get("schema"))
    loss_fix = (
        "check that the converted descriptor says what you mean, or write it in nfvplace's own "
        f"format ({schema}: 'nfvplace convert FILE' writes it)"
    )
    out.extend(
        rule_of.get(note.kind, doc_rules.DIALECT_LOSS).hit(
            note.path, note.message, loss_fix if note.kind not in rule_of else None
        )
        for note in conversion.notes
    )
    if any(note.kind == MISSING for note in conversion.notes):
        # an incomplete document: what is missing is said above, not checked further
        return _Checked(schema, out)
    checked = _check_data(conversion.data, resolve)
    for hit in checked.hits:
        if hit.rule is doc_rules.DECIMAL_MEMORY_UNIT:
            continue
        origin = conversion.origin_of(hit.path)
        message = f"{format_path(hit.path)}: {hit.message}" if hit.path else hit.message
        hint = vendor_hint(conversion.dialect, hit.rule.id, hit.hint)
        out.append(Hit(hit.rule, origin, message, hint))
    return _Checked(schema, out, checked.model)


def lint_document(document: SourceDocument, resolve: Resolver | None = None) -> list[Finding]:
    """Findings for one parsed document, each located by field path and source line."""
    return list(check_document(document, resolve).findings)


def check_document(
    document: SourceDocument,
    resolve: Resolver | None = None,
    validated: BaseModel | None = None,
) -> FileResult:
    """Like `lint_document`, also telling the document's kind and dialect, and giving the model it
    validated into (`FileResult.model`). One pass down: the dialect detected and the document
    converted once, then the schema, then the rules. A Kubernetes List is checked item by item
    (findings under `items/<n>`). `validated`: the model the caller already validated a document
    in nfvplace's own format into."""
    data = document.data
    kind = kind_of(data)
    if kind is None and isinstance(data, Mapping):
        dialect = detect(data)
        if dialect is not None:
            items = list_items(data)
            if items is None:
                return _result(document, _converted(data, dialect, resolve), dialect)
            hits: list[Hit] = []
            kind = None
            for index, item in enumerate(items):
                checked = _converted(item, dialect, resolve)
                hits.extend(hit.under(("items", index)) for hit in checked.hits)
                kind = checked.kind
            return _result(document, _Checked(kind, hits), dialect)
    return _result(document, _check_data(data, resolve, validated), None)


HOST_DIALECTS = ("openvim-host", "kubernetes-nrt")  # the dialects of hosts; the others are of VMs


def own_schema(dialect: str) -> str:
    """The schema of nfvplace's own format for what a dialect's documents describe."""
    return "nfvplace/chd/v1" if dialect in HOST_DIALECTS else "nfvplace/vmd/v1"


def _converted(data: Any, dialect: str, resolve: Resolver | None) -> _Checked:
    """A dialect document checked as what it converts to (its kind: the kind it converts to)."""
    try:
        conversion = convert(data)
    except DialectError as exc:
        return _Checked(
            None,
            [
                doc_rules.DIALECT.hit((), f"read as {dialect}", ""),
                doc_rules.SCHEMA.hit(
                    exc.path,
                    f"cannot convert from {dialect}: {exc}",
                    "fix the field, or write the descriptor in nfvplace's own format "
                    f"({own_schema(dialect)})",
                ),
            ],
        )
    return _check_conversion(conversion, resolve)


def _result(document: SourceDocument, checked: _Checked, dialect: str | None) -> FileResult:
    findings = tuple(
        sorted(
            (
                finding_from_hit(hit, document.source, document.line_of(hit.path))
                for hit in checked.hits
            ),
            key=lambda f: (f.line or 0, f.rule, f.path),
        )
    )
    return FileResult(document.source, findings, checked.kind, dialect, model=checked.model)


def lint_model(model: BaseModel, source: str = "<model>") -> FileResult:
    """The semantic findings of an already validated model (no file, so no lines).

    What the library checks before placing a VM Descriptor or VNF template it was handed as a model.
    """
    kind = getattr(model, "schema_", None)
    if isinstance(model, VnfTemplate):  # loading resolved each member's file into its descriptor
        members = tuple(
            m.model_copy(update={"file": None}) if m.descriptor is not None else m
            for m in model.members
        )
        model = model.model_copy(update={"members": members})
    checked = _Checked(kind, list(semantic_hits(model)), model)
    return _result(SourceDocument(data=None, source=source), checked, None)


def lint_text(text: str, source: str = "<string>", resolve: Resolver | None = None) -> FileResult:
    """Lint YAML or JSON text; syntax errors become NFV000 findings."""
    try:
        document = parse_text(text, source)
    except DescriptorError as exc:
        return error_result(exc, source)
    return check_document(document, resolve)


def error_result(exc: DescriptorError, source: str) -> FileResult:
    """A file that could not be parsed: NFV000 for syntax, NFV009 (unreadable) otherwise."""
    if exc.code in (INPUT_SYNTAX, INPUT_UNSAFE):
        rule = doc_rules.SYNTAX
        unreadable = False
    else:
        rule = doc_rules.UNREADABLE
        unreadable = True
    issues = exc.issues or ()
    if not issues:
        finding = Finding(
            rule.id, rule.severity, source, "", exc.message, None, rule.fix, code=exc.code
        )
        return FileResult(source, (finding,), unreadable=unreadable)
    findings = tuple(
        Finding(
            rule.id,
            rule.severity,
            source,
            issue.path,
            f"{exc.message}: {issue.message}",
            issue.line,
            issue.hint or rule.fix,
            code=exc.code,
        )
        for issue in issues
    )
    return FileResult(source, findings, unreadable=unreadable)


__all__ = [
    "Resolver",
    "check_document",
    "error_result",
    "lint_data",
    "lint_document",
    "lint_model",
    "lint_text",
    "semantic_hits",
]
