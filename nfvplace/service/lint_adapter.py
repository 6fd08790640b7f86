"""Lint findings for a request body: `nfvplace.lint` when present, else schema validation issues.

One small adapter so that the service does not depend on the lint package's internals; the lead can
simplify it once `nfvplace.lint` is merged.
"""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import ValidationError

from ..errors import DescriptorError
from ..models.loading import SourceDocument, model_for, validation_issues


def _schema_findings(document: SourceDocument) -> list[dict[str, Any]]:
    try:
        model = model_for(document.data, document.source)
    except DescriptorError as exc:
        return [
            _finding("schema", "error", document.source, i.path, i.message, i.hint, i.line)
            for i in exc.issues
        ]
    try:
        model.model_validate(document.data)
    except ValidationError as exc:
        return [
            _finding("schema", "error", document.source, i.path, i.message, i.hint, i.line)
            for i in validation_issues(exc, model, document)
        ]
    return []


def _finding(
    rule: str,
    severity: str,
    file: str,
    path: str,
    message: str,
    hint: str | None = None,
    line: int | None = None,
) -> dict[str, Any]:
    return {
        "rule": rule,
        "severity": severity,
        "file": file,
        "path": path,
        "message": message,
        "hint": hint,
        "line": line,
    }


def lint_findings(document: SourceDocument) -> list[dict[str, Any]]:
    """Findings as `{"rule", "severity", "file", "path", "message", "hint", "line"}`."""
    findings = _schema_findings(document)
    try:
        lint = importlib.import_module("nfvplace.lint")
        run = lint.lint_document
    except (ImportError, AttributeError):
        return findings
    if findings:  # the document does not even match its schema
        return findings
    out = []
    for f in run(document):
        out.append(
            _finding(
                str(getattr(f, "rule", "lint")),
                str(getattr(f, "severity", "error")),
                str(getattr(f, "file", None) or document.source),
                str(getattr(f, "path", "") or ""),
                str(getattr(f, "message", f)),
                getattr(f, "hint", None),
                getattr(f, "line", None),
            )
        )
    return out


def has_errors(findings: list[dict[str, Any]]) -> bool:
    return any(f["severity"] == "error" for f in findings)
