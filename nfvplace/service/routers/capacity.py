"""`POST /v1/capacity`: how many more instances of a VM fit, host by host (read-only, reader role)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ... import errors
from ...models.loading import SourceDocument
from ...models.vmd import VmDescriptor
from ...placement import capacity
from ..auth import require
from ..body import read_document
from ..deps import StoreDep
from ..descriptors import parse_descriptor
from ..problems import ProblemError
from .common import body_of, problems

router = APIRouter(prefix="/v1/capacity", tags=["capacity"])


class HostCapacityView(BaseModel):
    host: str
    count: int = Field(description="Instances that fit on this host, one after the other")
    limited_by: str = Field(description="The resource that runs out first (cores, hugepages, ...)")


class CapacityView(BaseModel):
    vm: str
    count: int = Field(description="Instances that fit on the whole fleet")
    hosts: list[HostCapacityView] = Field(description="The hosts that take at least one")


def capacity_vm(document: SourceDocument) -> VmDescriptor:
    body = document.data
    if not isinstance(body, Mapping) or "vm" not in body or set(body) - {"vm", "dialect"}:
        raise ProblemError(
            422,
            errors.SERVICE_INVALID_REQUEST,
            'the body must be {"vm": VM Descriptor}, with "dialect" if it is written in one',
        )
    lines = {path[1:]: line for path, line in document.lines.items() if path[:1] == ("vm",)}
    inner = SourceDocument(data=body["vm"], source="body.vm", lines=lines)
    return parse_descriptor(
        inner, VmDescriptor, "VM Descriptor", at=("vm",), dialect=body.get("dialect")
    )


@router.post(
    "",
    response_model=CapacityView,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403, 413, 415, 422),
    openapi_extra=body_of("CapacityRequest", '{"vm": VM Descriptor}, optional "dialect"'),
)
async def post_capacity(request: Request, store: StoreDep) -> dict[str, Any]:
    """How many more instances of the VM fit on the fleet as it stands (nothing is claimed)."""
    vm = capacity_vm(await read_document(request))
    hosts = list((await run_in_threadpool(store.snapshot)).hosts.values())
    report = await run_in_threadpool(capacity, hosts, vm)
    return report.to_dict()
