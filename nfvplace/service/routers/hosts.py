"""`/v1/hosts`: host agents report CHDs; everyone reads availability after claims."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ... import errors
from ...dialects import k8s_nrt
from ...integrations.kubernetes.calls import reconcile
from ...integrations.kubernetes.node_pods import NodePods, settle, shows
from ...models.chd import ComputeHostDescriptor
from ...models.loading import SourceDocument
from ...store import HostInUseError, HostRecord, Store
from ...store.records import HostPut
from ..auth import require
from ..body import read_document
from ..deps import StoreDep
from ..descriptors import DialectQuery, parse_descriptor
from ..problems import ProblemError
from .common import FastJSONResponse, body_of, problems

router = APIRouter(prefix="/v1/hosts", tags=["hosts"])

HostId = Annotated[str, Path(min_length=1, max_length=253, description="Host id (the CHD's id)")]


class HostConflict(BaseModel):
    placement: str
    instance: str
    path: str
    message: str


class StoredHostView(BaseModel):
    id: str
    generation: int = Field(description="Bumped by every change of the host or its claims")
    chd: dict[str, Any] = Field(description="The CHD with availability after live claims")
    conflicts: list[HostConflict] | None = Field(
        None, description="Claims the reported CHD no longer supports (PUT only)"
    )


class HostList(BaseModel):
    hosts: list[StoredHostView]


def view(record: HostRecord) -> dict[str, Any]:
    return {"id": record.id, "generation": record.generation, "chd": dict(record.availability)}


def _not_found(host_id: str) -> ProblemError:
    return ProblemError(404, errors.HOST_NOT_FOUND, f"no host {host_id!r}")


@router.get(
    "",
    response_model=HostList,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403),
)
def list_hosts(store: StoreDep) -> dict[str, Any]:
    """Every host with its availability after claims and its generation."""
    return {"hosts": [view(r) for r in store.list_hosts()]}


@router.get(
    "/{host_id:path}",
    response_model=StoredHostView,
    response_model_exclude_none=True,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403, 404),
)
def get_host(host_id: HostId, store: StoreDep, response: Response) -> dict[str, Any]:
    """One host: its CHD with availability after claims, and its generation."""
    record = store.get_host(host_id)
    if record is None:
        raise _not_found(host_id)
    response.headers["ETag"] = f'"{record.generation}"'
    return view(record)


@router.put(
    "/{host_id:path}",
    response_model=StoredHostView,
    dependencies=[Depends(require("host-agent"))],
    responses={
        201: {"description": "Created", "model": StoredHostView},
        # 404: a path that is no host's address (a host id holds no control character)
        **problems(401, 403, 404, 413, 415, 422),
    },
    openapi_extra=body_of(
        "ComputeHostDescriptor",
        "The CHD the host reports, or a host dialect's document (a Kubernetes "
        "NodeResourceTopology object, an OpenVIM host file)",
    ),
)
async def put_host(
    host_id: HostId, request: Request, store: StoreDep, dialect: DialectQuery = None
) -> JSONResponse:
    """Create or replace what a host reports (a CHD, or a host in a dialect such as OpenVIM's).
    Live claims are kept; conflicts are listed."""
    document = await read_document(request)
    put = await run_in_threadpool(report, store, document, host_id, dialect)
    answer = {
        "id": put.id,
        "generation": put.generation,
        "chd": put.availability,  # serialised by pydantic-core with the rest (a host is 10-100 KB)
        "conflicts": list(put.conflicts),
    }
    return FastJSONResponse(
        answer,
        status_code=201 if put.created else 200,
        headers={"ETag": f'"{put.generation}"', "Location": f"/v1/hosts/{host_id}"},
    )


def report(
    store: Store,
    document: SourceDocument,
    host_id: str,
    dialect: str | None = None,
    pods: NodePods | None = None,
) -> HostPut:
    """Store what a host reports (a CHD or a host dialect's document: `PUT /v1/hosts/{id}` and
    the Kubernetes watch's NodeResourceTopology objects both come here); a NodeResourceTopology
    then settles the pods the Kubernetes door assumed on that node (by its pod fingerprint
    where it has one and `pods`, what the pod watch knows on each node, match it)."""
    chd = parse_descriptor(
        document, ComputeHostDescriptor, "Compute Host Descriptor", dialect=dialect
    )
    if chd.id != host_id:
        raise ProblemError(
            422,
            errors.HOST_ID_MISMATCH,
            f"the CHD's id {chd.id!r} is not the host {host_id!r} of the URL",
        )
    # Each NodeResourceTopology read moves the node's generation, equal or not: the Kubernetes
    # door's assumed pods end on a newer generation (`assumed.py`). A host agent's unchanged
    # report keeps it.
    nrt = isinstance(document.data, Mapping) and k8s_nrt.detect(document.data)
    put = store.put_host(chd, same_keeps=not nrt)
    if nrt:
        signed = shows(pods, put.id, document.data)
        reconcile(store, put.id, put.generation, put.availability, signed)
        if pods is not None and signed is not None:  # what the pod watch saw while it matched
            settle(store, pods, (put.id,))  # and the departures it showed gone
        elif pods is not None and pods.departures is not None:  # no fingerprint to tell
            pods.departures.unsigned(put.id)
    return put


@router.delete(
    "/{host_id:path}",
    status_code=204,
    response_class=Response,
    dependencies=[Depends(require("admin"))],
    responses=problems(401, 403, 404, 409),
)
def delete_host(host_id: HostId, store: StoreDep) -> Response:
    """Forget a host; refused (409) while placements hold resources on it."""
    try:
        deleted = store.delete_host(host_id)
    except HostInUseError as exc:
        raise ProblemError(
            409,
            errors.HOST_IN_USE,
            f"{len(exc.placements)} placement(s) hold resources on {host_id}; release them first",
            extra={"placements": list(exc.placements)},
        ) from exc
    if not deleted:
        raise _not_found(host_id)
    return Response(status_code=204)
