"""`POST /v1/convert`: a descriptor in any dialect, converted to nfvplace's format or to a dialect."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel

from ...conversion import convert
from ..auth import require
from ..body import read_document
from ..descriptors import DialectQuery, check_dialect
from .common import body_of, problems

router = APIRouter(prefix="/v1/convert", tags=["convert"])


class ConvertFindingView(BaseModel):
    path: str
    message: str
    kind: Literal["dropped", "assumed", "missing"]
    severity: Literal["error", "warning", "info"]


class ConvertResult(BaseModel):
    dialect: str | None
    target: str
    document: Any
    findings: list[ConvertFindingView]
    complete: bool
    ok: bool


@router.post(
    "",
    response_model=ConvertResult,
    operation_id="convertDescriptor",
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403, 413, 415, 422),
    openapi_extra=body_of("Descriptor", "A descriptor in nfvplace's format or any dialect"),
)
async def convert_route(
    request: Request,
    to: Literal["nfvplace", "nova", "osm", "sol006", "openvim"] = Query(
        "nfvplace", description="Target format"
    ),
    strict: bool = Query(False, description="ok is false when anything was not carried"),
    dialect: DialectQuery = None,
) -> dict[str, Any]:
    """Convert one descriptor (JSON, YAML or SOL006 XML, as its Content-Type says; with no type,
    or curl's form type, as the body looks); the
    findings say what was not carried, read with an assumption, or is missing. The source's
    dialect is detected; `dialect` says which one it must be."""
    document = await read_document(request)
    check_dialect(document.data, dialect)
    result = convert(document, to=to, strict=strict)
    return {
        "dialect": result.dialect,
        "target": result.target,
        "document": result.data,
        "findings": [vars(f) for f in result.findings],
        "complete": result.complete,
        "ok": result.ok,
    }
