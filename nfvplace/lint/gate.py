"""The one lint gate every door passes before placing, evaluating or counting.

`nfvplace.place`, `capacity` and `evaluate`, `Fleet.place`, the CLI's `place` and `capacity`, and the
service's routes call `gate`: what `nfvplace lint` refuses, no door places. Given the parsed document
a descriptor is read from, the findings are the file's own (with lines, unit spellings and a
dialect's notes), exactly what `nfvplace lint FILE` prints; given a model, its semantic findings.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from pathlib import Path

from pydantic import BaseModel

from ..errors import DescriptorError
from ..models.kinds import KINDS, kind_of
from ..models.loading import Descriptor, SourceDocument, resolve_members
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from ..reader import load_document, load_file, read_path
from . import rules
from .engine import check_document, error_result, lint_model
from .files import file_resolver
from .finding import Severity
from .findings import FileResult, Hit, refuse_errors
from .rules.vnf import Resolver
from .schema import decimal_unit_hits


def gate(
    descriptor: BaseModel | SourceDocument,
    what: str,
    resolve: Resolver | None = None,
    validated: BaseModel | None = None,
) -> FileResult:
    """Raise `LintError` (lint's findings and rule ids) when lint refuses `descriptor`; else the
    findings (warnings and information) it passed with, and the model it read
    (`FileResult.model`). `resolve` loads a VNF template's member files, as `nfvplace lint` does;
    `validated` is the model the caller already validated a document in nfvplace's format into."""
    if isinstance(descriptor, SourceDocument):
        result = check_document(descriptor, resolve, validated)
    else:
        result = lint_model(descriptor, getattr(descriptor, "name", None) or "<vm>")
    refuse_errors(result, what)
    return result


def refuse(descriptor: VmDescriptor | VnfTemplate, what: str) -> None:
    """`gate` for a caller that reads none of the findings (`Fleet.place`): the same `LintError`
    for what lint refuses; when lint passes a VM Descriptor, its rules ran but no finding was
    built (paths, lines, order: about a third of the gate's time, for nothing)."""
    # `check_vmd` is what `lint_model` reads of a VM Descriptor
    if isinstance(descriptor, VmDescriptor) and _no_error(rules.check_vmd(descriptor)):
        return
    gate(descriptor, what)


def shape(descriptor: object) -> str | None:
    """What lint's verdict on a VM Descriptor is a function of, as one key: every field but its
    name, as JSON (the JSON of a validated descriptor gives its values back, and no rule reads a
    VM's name: `tests/lint/test_gate_shape.py`). None for anything else (a VNF template's
    members are read through it)."""
    if type(descriptor) is not VmDescriptor:
        return None
    return descriptor.model_dump_json(exclude={"name"})


def _no_error(hits: Iterable[Hit]) -> bool:
    """Whether none of `hits` is of error severity (lint passes what they check)."""
    return next((hit for hit in hits if hit.rule.severity is Severity.error), None) is None


def passes(document: SourceDocument, validated: BaseModel) -> bool:
    """True when `gate(document, what, validated=validated)` passes a VM Descriptor document in
    nfvplace's own format, told without building its findings (their paths, lines and order: about
    half of the gate, for a verdict that reads none of them): the same hits of error severity are
    looked for, the document's unit spellings then the model's rules. False for a document lint
    refuses and for any other document: the caller then runs `gate` for the findings."""
    if not isinstance(validated, VmDescriptor) or KINDS.get(kind_of(document.data) or "") is not (
        VmDescriptor
    ):
        return False
    return _no_error(chain(decimal_unit_hits(document.data), rules.check_vmd(validated)))


def load_gated(path: Path, what: str) -> Descriptor:
    """The descriptor in a file, read once and passed through `gate`, a VNF template's member
    files resolved next to it and given inline: one pass down, each file parsed, converted and
    validated once. A file lint cannot read is refused as lint refuses it (NFV000, NFV009)."""
    try:
        document = read_path(path)
    except DescriptorError as exc:
        refuse_errors(error_result(exc, str(path)), what)
        raise
    members: dict[Path, VmDescriptor] = {}
    model = gate(document, what, file_resolver(path.parent, members)).model
    if isinstance(model, VnfTemplate):
        return resolve_members(
            model, path.parent, str(path), lambda member: members.get(member) or load_file(member)
        )
    if isinstance(model, Descriptor):
        return model
    # a list of several, or a dialect document without what placement needs (NFV007, a warning
    # to lint): the reader says what it holds, or refuses it
    return load_document(document)


__all__ = ["gate", "load_gated", "refuse", "shape"]
