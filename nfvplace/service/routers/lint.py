"""`POST /v1/lint`: findings for any descriptor."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel

from ...errors import DescriptorError
from ..auth import require
from ..body import read_document
from ..lint_adapter import lint_findings
from .common import body_of, problems

router = APIRouter(prefix="/v1/lint", tags=["lint"])


class Finding(BaseModel):
    rule: str
    severity: str
    file: str
    path: str
    message: str
    hint: str | None = None
    line: int | None = None


class LintReport(BaseModel):
    findings: list[Finding]
    errors: int
    warnings: int


@router.post(
    "",
    response_model=LintReport,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403, 413, 415),
    openapi_extra=body_of("Descriptor", "Any descriptor: CHD, VM Descriptor, VNF template, ..."),
)
async def lint(request: Request) -> dict[str, Any]:
    """Lint one descriptor (JSON, or YAML with `Content-Type: application/yaml`)."""
    try:
        document = await read_document(request)
    except DescriptorError as exc:
        findings = [
            {
                "rule": exc.code,
                "severity": "error",
                "file": "body",
                "path": i.path,
                "message": i.message,
                "hint": i.hint,
                "line": i.line,
            }
            for i in exc.issues
        ] or [
            {
                "rule": exc.code,
                "severity": "error",
                "file": "body",
                "path": "",
                "message": exc.message,
            }
        ]
    else:
        findings = lint_findings(document)
    return {
        "findings": findings,
        "errors": sum(f["severity"] == "error" for f in findings),
        "warnings": sum(f["severity"] == "warning" for f in findings),
    }
