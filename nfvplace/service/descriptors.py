"""Turning a request document into a typed descriptor, or a 422 with lint findings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from .. import errors
from ..lint.rules.document import SCHEMA
from ..models.loading import SourceDocument, validation_issues
from .lint_adapter import has_errors, lint_findings
from .problems import ProblemError


def parse_as[M: BaseModel](document: SourceDocument, model: type[M], what: str) -> M:
    """`document.data` validated as `model`; ProblemError 422 with findings if it is not."""
    data = document.data
    if not isinstance(data, Mapping):
        raise ProblemError(
            422,
            errors.INPUT_INVALID,
            f"{what} must be a JSON object",
            extra={"findings": [_finding(document.source, "", "not an object")]},
        )
    default = model.model_fields.get("schema_")
    if "schema" not in data and default is not None:
        data = {"schema": default.default, **data}
        document = SourceDocument(data=data, source=document.source, lines=document.lines)
    try:
        parsed = model.model_validate(data)
    except ValidationError as exc:
        findings = [
            _finding(document.source, i.path, i.message, i.hint, i.line)
            for i in validation_issues(exc, model, document)
        ]
        raise ProblemError(
            422, errors.INPUT_INVALID, f"invalid {what}", extra={"findings": findings}
        ) from exc
    findings = lint_findings(document)
    if has_errors(findings):
        raise ProblemError(
            422, errors.INPUT_INVALID, f"{what} has lint errors", extra={"findings": findings}
        )
    return parsed


def _finding(
    source: str, path: str, message: str, hint: str | None = None, line: int | None = None
) -> dict[str, Any]:
    return {
        "rule": SCHEMA.id,  # NFV001, as `nfvplace lint` says
        "code": errors.INPUT_INVALID,
        "severity": "error",
        "file": source,
        "path": path,
        "message": message,
        "hint": hint,
        "line": line,
    }
