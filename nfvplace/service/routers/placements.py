"""`/v1/placements`: place a VM or a VNF, read it back, release it."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError

from ... import errors
from ...dialects import sol006_xml
from ...models.configuration import VmConfiguration
from ...models.loading import SourceDocument
from ...models.vmd import VmDescriptor
from ...models.vnf import VnfTemplate
from ...placement import BatchItem
from ...reader import load_document, parse_any
from ...render import render
from ..auth import SECURITY, admit, require
from ..body import JSON_TYPES, XML_SOURCE, parse_body, read_body
from ..deps import StoreDep, get_placements
from ..descriptors import parse_descriptor, schema_findings
from ..moves import vm_descriptors
from ..placing import PlacementRequest
from ..problems import ProblemError
from ..requests import ENVELOPE_ERROR, BatchEnvelopeEntry, PlacementEnvelope
from ..shapes import RequestShapes
from .common import FastJSONResponse, RequestAloneRoute, body_of, problems

router = APIRouter(prefix="/v1/placements", tags=["placements"])

PlacementId = Annotated[str, Path(min_length=1, max_length=64)]


class PlacementView(BaseModel):
    id: str
    configurations: list[dict[str, Any]] = Field(description="VM Configurations, one per VM")


class PlacementList(BaseModel):
    placements: list[PlacementView] = Field(description="Live placements in id order")
    next: str | None = Field(description="The next page (None: this is the last)")


class RenderedConfiguration(BaseModel):
    vm: str
    host: str
    format: str
    text: str = Field(description="The rendered document (e.g. a libvirt domain XML)")
    warnings: list[str] = Field(description="What the target cannot express, one line each")


class RenderView(BaseModel):
    id: str
    renders: list[RenderedConfiguration] = Field(description="One per VM Configuration")


class DryRunView(BaseModel):
    dry_run: bool
    configurations: list[dict[str, Any]]


def _invalid(message: str) -> ProblemError:
    return ProblemError(422, errors.SERVICE_INVALID_REQUEST, message)


def _enveloped(document: SourceDocument) -> SourceDocument:
    """A SOL006 XML body is the descriptor itself: `{"vm": ...}` or `{"vnf": ...}` as it reads."""
    key = "vnf" if isinstance(load_document(document), VnfTemplate) else "vm"
    lines = {(key, *path): line for path, line in document.lines.items()}
    return SourceDocument(data={key: document.data}, source=document.source, lines=lines)


def _inner(document: SourceDocument, key: str) -> SourceDocument:
    """The document of `"vm"` or `"vnf"`: an object, or a string holding a whole document (SOL006
    XML, YAML or JSON text)."""
    value = document.data[key]
    if isinstance(value, str):
        xml = sol006_xml.looks_like_xml(value)
        return parse_any(value, f"body.{key}" + (".xml" if xml else ""))
    lines = {path[1:]: line for path, line in document.lines.items() if path[:1] == (key,)}
    return SourceDocument(data=value, source=f"body.{key}", lines=lines)


def placement_request(document: SourceDocument) -> PlacementRequest:
    """The body's envelope read as `PlacementEnvelope`, then its descriptor through the gate."""
    if document.source == XML_SOURCE:
        document = _enveloped(document)
    try:
        envelope = PlacementEnvelope.model_validate(document.data)
    except ValidationError as exc:
        raise _refusal(exc, document) from None
    body = document.data
    options = {
        "body": body,
        "dry_run": envelope.dry_run,
        "policy": envelope.policy,
        "explain": envelope.explain,
    }
    if envelope.batch is not None:
        return PlacementRequest(descriptor=batch_items(document, envelope.batch), **options)
    key = "vm" if "vm" in body else "vnf"
    descriptor = _descriptor(document, key, envelope.dialect)
    return PlacementRequest(descriptor=descriptor, moves=envelope.moves, **options)


def _refusal(exc: ValidationError, document: SourceDocument) -> ProblemError:
    """What `PlacementEnvelope` refused, as 422: the envelope's own rules and a batch's shape
    are `invalid_request` with their message; the options' types and values are `input.invalid`
    with a finding each (as a descriptor's schema errors are)."""
    refused = exc.errors(include_url=False)
    rule = next((e for e in refused if e["type"] == ENVELOPE_ERROR), None)
    if rule is not None:
        return _invalid(rule["msg"])
    if all(e["loc"][:1] == ("batch",) for e in refused):
        return _invalid(_batch_problem(refused[0]["loc"]))
    findings = schema_findings(exc, PlacementEnvelope, document)
    return ProblemError(422, errors.INPUT_INVALID, "invalid request", extra={"findings": findings})


def _batch_problem(loc: tuple[int | str, ...]) -> str:
    """What is wrong at `loc` in `"batch"`, in words."""
    if len(loc) < 2:
        return '"batch" must be a non-empty list of {"vm": VM Descriptor, "count": k}'
    if loc[2:3] == ("count",):
        return f"batch[{loc[1]}].count must be an integer from 1 to 10000"
    return f'batch[{loc[1]}] must be {{"vm": VM Descriptor, "count": k}}'


def _descriptor(document: SourceDocument, key: str, dialect: Any) -> VmDescriptor | VnfTemplate:
    """The VM Descriptor (`key` "vm") or VNF template ("vnf") of the body, read in `dialect`; a
    template's members must be inline."""
    inner = _inner(document, key)
    descriptor: VmDescriptor | VnfTemplate
    if key == "vm":
        descriptor = parse_descriptor(
            inner, VmDescriptor, "VM Descriptor", at=(key,), dialect=dialect
        )
    else:
        descriptor = parse_descriptor(
            inner, VnfTemplate, "VNF template", at=(key,), dialect=dialect
        )
        missing = [m.name for m in descriptor.members if m.descriptor is None]
        if missing:
            raise ProblemError(
                422,
                errors.INPUT_REFERENCE,
                f"member(s) {missing} of the VNF template refer to files, which the server "
                "cannot read; send the members inline: `nfvplace convert TEMPLATE.yaml -f json` "
                "writes the template with every member file inlined",
                extra={"members": missing},
            )
    return descriptor


def batch_items(
    document: SourceDocument, entries: list[BatchEnvelopeEntry]
) -> tuple[BatchItem, ...]:
    """`"batch": [{"vm": VM Descriptor, "count": k}, ...]` as batch items, each VM through the
    gate."""
    items = []
    for index, entry in enumerate(entries):
        prefix = ("batch", index, "vm")
        lines = {p[3:]: line for p, line in document.lines.items() if p[:3] == prefix}
        inner = SourceDocument(data=entry.vm, source=f"body.batch[{index}].vm", lines=lines)
        vm = parse_descriptor(inner, VmDescriptor, "VM Descriptor")
        items.append(BatchItem(vm, entry.count))
    return tuple(items)


CACHED_BODY_BYTES = 64 * 1024


SHAPES = RequestShapes(placement_request)


@lru_cache(maxsize=256)
def parsed_request(raw: bytes, media: str) -> PlacementRequest:
    """A request body parsed, validated and linted, kept by its bytes: orchestrators place the
    same descriptors again and again, and parsing and linting one took a tenth of a placement's
    time. A request is a pure function of its body (the Idempotency-Key is a header), descriptors
    are frozen models, and a refused body raises, so nothing refused is kept. A JSON body is
    also looked up by its shape (the same VM under another name: `shapes`)."""
    document = parse_body(raw, media)
    if media in JSON_TYPES:
        return SHAPES.request(document)
    return placement_request(document)


def _idempotency_key(value: str | None) -> str | None:
    if value is None:
        return None
    if not (1 <= len(value) <= 255) or not value.isprintable():
        raise _invalid("Idempotency-Key must be 1 to 255 printable characters")
    return value


IDEMPOTENCY_KEY = "Retries with the same key get the first answer and claim nothing more"
# `create_placement` reads its header itself; this is how FastAPI would declare it
IDEMPOTENCY_KEY_PARAMETER = {
    "description": IDEMPOTENCY_KEY,
    "in": "header",
    "name": "Idempotency-Key",
    "required": False,
    "schema": {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": IDEMPOTENCY_KEY,
        "title": "Idempotency-Key",
    },
}


async def create_placement(request: Request) -> JSONResponse:
    """Place a VM, a VNF template or a batch (jointly) and claim its resources atomically."""
    # The busiest route takes the request alone, and checks its token and reads its header
    # itself: solving FastAPI's dependencies cost more than the rest of the route's own work
    # (docs/benchmarks.md, "A leaner hot path"), so the router calls it as it is
    # (`RequestAloneRoute`).
    admit(request.app.state.tokens, request.headers.get("authorization"), "placer")
    key = _idempotency_key(request.headers.get("idempotency-key"))
    placements = await get_placements(request)
    raw, media = await read_body(request)
    if len(raw) <= CACHED_BODY_BYTES:
        parsed = parsed_request(raw, media)
    else:
        parsed = placement_request(parse_body(raw, media))
    answer = await placements.place_async(parsed, key)
    return FastJSONResponse(answer.body, status_code=answer.status, headers=answer.headers)


router.add_api_route(
    "",
    create_placement,
    methods=["POST"],
    status_code=201,
    response_model=PlacementView,
    responses={
        200: {"description": "Dry run: nothing claimed", "model": DryRunView},
        **problems(401, 403, 409, 413, 415, 422),
    },
    openapi_extra={
        "parameters": [IDEMPOTENCY_KEY_PARAMETER],
        **SECURITY,
        **body_of(
            "PlacementRequest",
            '{"vm": VM Descriptor}, {"vnf": VNF template} or {"batch": [{"vm": VM Descriptor, '
            '"count": k}, ...]}, optional "dry_run", "policy"',
        ),
    },
    route_class_override=RequestAloneRoute,
)


@router.get(
    "",
    response_model=PlacementList,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403, 422),
)
def list_placements(
    store: StoreDep,
    host: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=512,
            description="Only placements holding resources on this host",
        ),
    ] = None,
    vm: Annotated[
        str | None,
        Query(min_length=1, max_length=512, description="Only placements of a VM of this name"),
    ] = None,
    owner: Annotated[
        str | None,
        Query(min_length=1, max_length=512, description="Only the placement of this instance id"),
    ] = None,
    after: Annotated[
        str | None, Query(min_length=1, max_length=64, description="Placement id to list after")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Placements per page")] = 100,
) -> dict[str, Any]:
    """Live placements, filtered by host, VM name and owner (instance id), a page at a time."""
    page = store.list_placements(host=host, vm=vm, owner=owner, after=after, limit=limit)
    following = None
    if page.next_after is not None:
        query = {"host": host, "vm": vm, "owner": owner, "limit": limit, "after": page.next_after}
        following = "/v1/placements?" + urlencode({k: v for k, v in query.items() if v is not None})
    return {"placements": [dict(p.response) for p in page.placements], "next": following}


@router.get(
    "/{placement_id}",
    response_model=PlacementView,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403, 404),
)
def get_placement(placement_id: PlacementId, store: StoreDep) -> dict[str, Any]:
    """A live placement and its VM Configurations."""
    record = store.get_placement(placement_id)
    if record is None:
        raise ProblemError(404, errors.PLACEMENT_NOT_FOUND, f"no placement {placement_id!r}")
    return dict(record.response)


@router.get(
    "/{placement_id}/render",
    response_model=RenderView,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403, 404, 422),
)
def render_placement(
    placement_id: PlacementId,
    store: StoreDep,
    target: Annotated[
        Literal["libvirt", "openstack", "vmx"],
        Query(alias="format", description="What to render each VM Configuration as"),
    ] = "libvirt",
) -> dict[str, Any]:
    """A live placement's VM Configurations rendered for deployment (the `nfvplace render` renderers)."""
    record = store.get_placement(placement_id)
    if record is None:
        raise ProblemError(404, errors.PLACEMENT_NOT_FOUND, f"no placement {placement_id!r}")
    renders = []
    vms = vm_descriptors(record)
    for stored in record.configurations:
        config = VmConfiguration.model_validate(stored)
        result = render(config, target, vm=vms.get(config.vm))
        renders.append(
            {
                "vm": config.vm,
                "host": config.host,
                "format": target,
                "text": result.text,
                "warnings": list(result.warnings),
            }
        )
    return {"id": placement_id, "renders": renders}


@router.delete(
    "/{placement_id}",
    status_code=204,
    response_class=Response,
    dependencies=[Depends(require("placer"))],
    responses=problems(401, 403, 404),
)
def delete_placement(placement_id: PlacementId, store: StoreDep, request: Request) -> Response:
    """Release a placement's resources (204); 404 once it is gone."""
    if not store.release_placement(placement_id):
        raise ProblemError(404, errors.PLACEMENT_NOT_FOUND, f"no placement {placement_id!r}")
    request.app.state.metrics.releases.inc()
    return Response(status_code=204)
