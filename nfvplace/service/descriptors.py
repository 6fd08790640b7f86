"""Turning a request document into a typed descriptor, or a 422 with lint findings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import BaseModel, ValidationError

from .. import errors
from ..dialects import detect
from ..errors import LintError
from ..lint import gate
from ..lint.findings import FileResult
from ..lint.gate import passes
from ..lint.rules.document import SCHEMA
from ..models.loading import SourceDocument, error_location, validation_issues
from ..models.source import parse_path
from ..reader import load_document
from .problems import ProblemError
from .requests import DIALECTS


def parse_as[M: BaseModel](
    document: SourceDocument, model: type[M], what: str, at: Sequence[str | int] = ()
) -> M:
    """`document.data` validated as `model`; ProblemError 422 with findings if it is not.

    `at` is where the document sits in the request body (for the findings' JSON pointers).
    """
    data = document.data
    if not isinstance(data, Mapping):
        raise ProblemError(
            422,
            errors.INPUT_INVALID,
            f"{what} must be a JSON object",
            extra={"findings": [_finding(document.source, "", "not an object", at=at)]},
        )
    default = model.model_fields.get("schema_")
    if "schema" not in data and default is not None:
        data = {"schema": default.default, **data}
        document = SourceDocument(data=data, source=document.source, lines=document.lines)
    try:
        parsed = model.model_validate(data)
    except ValidationError as exc:
        findings = schema_findings(exc, model, document, at)
        raise ProblemError(
            422, errors.INPUT_INVALID, f"invalid {what}", extra={"findings": findings}
        ) from exc
    if not passes(document, parsed):  # refused (or not a VM Descriptor): the gate's findings
        gated(document, what, at, parsed)
    return parsed


def gated(
    document: SourceDocument,
    what: str,
    at: Sequence[str | int] = (),
    validated: BaseModel | None = None,
) -> FileResult:
    """The lint gate every door passes: 422 with lint's findings when lint refuses `document`,
    each with the JSON pointer of its field in the request body (as the schema's findings); else
    what lint found, with the model it read. `validated`: the model `document` was validated into
    (not validated again)."""
    try:
        return gate(document, what, validated=validated)
    except LintError as exc:
        findings = [
            finding.as_json() | {"pointer": json_pointer((*at, *parse_path(finding.path)))}
            for finding in exc.findings
        ]
        raise ProblemError(
            422, errors.INPUT_INVALID, f"{what} has lint errors", extra={"findings": findings}
        ) from None


DialectQuery = Annotated[
    Literal[DIALECTS] | None,  # type: ignore[valid-type]
    Query(description="The body is written in this dialect (detected when not given)"),
]


def check_dialect(data: Any, dialect: str | None, what: str = "the body") -> str | None:
    """The dialect `data` is written in (None: nfvplace's own format), detected as the CLI and
    /ui do; when the caller names one (`dialect`), 422 unless it is that one."""
    found = detect(data) if isinstance(data, Mapping) else None
    if dialect is None:
        return found
    if dialect not in DIALECTS:
        raise ProblemError(
            422,
            errors.SERVICE_INVALID_REQUEST,
            f'"dialect" must be one of {list(DIALECTS)}, got {dialect!r}',
        )
    if (found or "nfvplace") != dialect:
        raise ProblemError(
            422,
            errors.SERVICE_INVALID_REQUEST,
            f"{what} is not written in {dialect} (it reads as {found or 'nfvplace'})",
        )
    return found


def parse_descriptor[M: BaseModel](
    document: SourceDocument,
    model: type[M],
    what: str,
    *,
    at: Sequence[str | int] = (),
    dialect: str | None = None,
) -> M:
    """`document.data` as `model`, written in nfvplace's format or in any dialect (detected, or
    the one the caller names): linted as `nfvplace lint` lints it (a dialect document as what it
    converts to), converted and validated; 422 with findings when lint or validation refuses."""
    found = check_dialect(document.data, dialect, f'"{at[0]}"' if at else "the body")
    if found is None:
        return parse_as(document, model, what, at)
    read = gated(document, f"{what} ({found})", at).model  # converted and validated once
    # None: a list of several, or a dialect document without what placement needs (NFV007, a
    # warning to lint): the reader says what it holds, or refuses it
    descriptor = read if read is not None else load_document(document)
    if not isinstance(descriptor, model):
        kind = type(descriptor).__name__
        send = {"VnfTemplate": "vnf", "VmDescriptor": "vm"}.get(kind)
        hint = f'; send it as "{send}"' if at and send and at[0] != send else ""
        raise ProblemError(
            422,
            errors.INPUT_UNKNOWN_KIND,
            f"the {found} document converts to a {kind}, not a {what}{hint}",
        )
    return descriptor


def json_pointer(path: Sequence[str | int]) -> str:
    """RFC 6901: `("numa_nodes", 0, "id")` -> `/numa_nodes/0/id`."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def schema_findings(
    exc: ValidationError,
    model: type[BaseModel],
    document: SourceDocument,
    at: Sequence[str | int] = (),
) -> list[dict[str, Any]]:
    """One finding per validation error, each with its path, JSON pointer and line."""
    out = []
    issues = validation_issues(exc, model, document)
    for issue, err in zip(issues, exc.errors(include_url=False), strict=True):
        loc = error_location(err["loc"], document.data)
        out.append(
            _finding(document.source, issue.path, issue.message, issue.hint, issue.line)
            | {"pointer": json_pointer((*at, *loc))}
        )
    return out


def _finding(
    source: str,
    path: str,
    message: str,
    hint: str | None = None,
    line: int | None = None,
    at: Sequence[str | int] = (),
) -> dict[str, Any]:
    return {
        "rule": SCHEMA.id,  # NFV001, as `nfvplace lint` says
        "code": errors.INPUT_INVALID,
        "severity": "error",
        "file": source,
        "path": path,
        "pointer": json_pointer(at),
        "message": message,
        "hint": hint,
        "line": line,
    }
