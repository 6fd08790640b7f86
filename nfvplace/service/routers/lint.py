"""`POST /v1/lint`: findings for any descriptor."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from ...errors import DescriptorError
from ...lint.engine import error_result
from ..auth import require
from ..body import read_document
from ..descriptors import DialectQuery, check_dialect
from ..lint_adapter import lint_findings
from .common import body_of, problems

router = APIRouter(prefix="/v1/lint", tags=["lint"])


class LintFindingView(BaseModel):
    """One lint finding as the API answers it: the same fields as `nfvplace lint --format json`."""

    rule: str = Field(description="Lint rule id (NFVnnn)")
    code: str | None = Field(None, description="Stable error code of an error finding")
    severity: str
    file: str
    path: str
    message: str
    hint: str | None = None
    line: int | None = None


class LintView(BaseModel):
    findings: list[LintFindingView]
    errors: int
    warnings: int


@router.post(
    "",
    response_model=LintView,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403, 413, 415, 422),
    openapi_extra=body_of("Descriptor", "Any descriptor: CHD, VM Descriptor, VNF template, ..."),
)
async def lint(request: Request, dialect: DialectQuery = None) -> dict[str, Any]:
    """Lint one descriptor (JSON, or YAML with `Content-Type: application/yaml`), in nfvplace's
    format or a dialect (detected; `dialect` says which one it must be)."""
    try:
        document = await read_document(request)
    except DescriptorError as exc:  # the same findings as `nfvplace lint` (NFV000, NFV009, ...)
        findings = [f.as_json() for f in error_result(exc, "body").findings]
    else:
        check_dialect(document.data, dialect)
        findings = lint_findings(document)
    return {
        "findings": findings,
        "errors": sum(f["severity"] == "error" for f in findings),
        "warnings": sum(f["severity"] == "warning" for f in findings),
    }
