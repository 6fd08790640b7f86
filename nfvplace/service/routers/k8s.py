"""`/k8s/v1`: the Kubernetes scheduler extender (filter, prioritize) and its assumed pods.

The routes speak the upstream JSON of `k8s.io/kube-scheduler/extender/v1` (Go field names as keys);
see docs/integrations/kubernetes.md. A filter request nfvplace cannot read is answered with the
upstream `Error` field (the scheduler reports it on the pod), not a problem document.
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ... import errors
from ...integrations.kubernetes.calls import bind_call, filter_call, prioritize_call
from ...integrations.kubernetes.extender import (
    ExtenderInputError,
    empty,
    read_args,
    read_binding,
)
from ...store.assumed import AssumedPods
from ...store.departed import PRUNED_S, DepartedPods
from ...store.records import utc_now
from .. import k8s_cluster
from ..auth import require
from ..body import read_document
from ..deps import DoorDep, StoreDep
from ..problems import ProblemError
from .common import problems

router = APIRouter(prefix="/k8s/v1", tags=["kubernetes"])

NODE_LIST = {
    "type": ["object", "null"],
    "description": "A v1.NodeList (`items`: Node objects)",
    "properties": {"items": {"type": "array", "items": {"type": "object"}}},
}
EXTENDER_ARGS = {
    "requestBody": {
        "required": True,
        "description": "`ExtenderArgs` (k8s.io/kube-scheduler/extender/v1): the pod, and the "
        "candidate nodes by name (`nodeCacheCapable: true`) or as Node objects",
        "content": {
            "application/json": {
                "schema": {
                    "title": "ExtenderArgs",
                    "type": "object",
                    "required": ["Pod"],
                    "properties": {
                        "Pod": {"type": "object", "description": "The v1.Pod to schedule"},
                        "Nodes": NODE_LIST,
                        "NodeNames": {"type": ["array", "null"], "items": {"type": "string"}},
                    },
                }
            }
        },
    }
}


class ExtenderFilterResult(BaseModel):
    """`ExtenderFilterResult`: the nodes that take the pod, and why the others do not."""

    Nodes: dict[str, Any] | None = Field(None, description="The Node objects (Nodes given)")
    NodeNames: list[str] | None = Field(None, description="The node names (NodeNames given)")
    FailedNodes: dict[str, str] = Field(description="Nodes that may take it later, and why not")
    FailedAndUnresolvableNodes: dict[str, str] = Field(description="Nodes that cannot, and why")
    Error: str = ""


class HostPriority(BaseModel):
    """`HostPriority`: a node's score, 0 to 10 (higher is better)."""

    Host: str
    Score: int


class AssumedPodView(BaseModel):
    uid: str
    pod: str = Field(description="namespace/name")
    node: str = Field(description="The node it is bound to")
    takes: dict[str, dict[str, int]] = Field(
        description="resource -> NUMA node -> amount (CPUs, bytes, devices), as the kubelet "
        "would allocate it there"
    )
    created_at: str
    expires_at: str
    running_until: str | None = Field(
        None,
        description="Seen running (admitted by its kubelet): no longer assumed from then on, once "
        "its node's NodeResourceTopology has been read again",
    )


class DepartedPodView(BaseModel):
    uid: str
    pod: str = Field(description="namespace/name")
    node: str = Field(description="The node it left")
    takes: dict[str, int] = Field(description="resource -> amount it held on the node")
    left_at: str


class AssumedPodList(BaseModel):
    pods: list[AssumedPodView]
    departed: list[DepartedPodView] = Field(
        default_factory=list,
        description="Pods the pod watch saw leave a node whose NodeResourceTopology does not "
        "show them gone yet (filter answers retry where their room would take a pod)",
    )


@router.post(
    "/filter",
    response_model=ExtenderFilterResult,
    dependencies=[Depends(require("placer"))],
    responses=problems(401, 403, 413, 415, 422),
    openapi_extra=EXTENDER_ARGS,
)
async def extender_filter(request: Request, door: DoorDep) -> JSONResponse:
    """The nodes whose kubelet would admit the pod, NUMA-aligned as its Topology Manager policy
    says, counting the pods bound there that their NodeResourceTopology does not show yet. When
    none would now but some would once those show, the answer is an `Error` (kube-scheduler then
    retries the pod after a backoff). Nothing is assumed."""
    document = await read_document(request)
    try:
        args = read_args(document.data)
    except ExtenderInputError as exc:
        return JSONResponse(empty(str(exc)))
    return JSONResponse(await run_in_threadpool(filter_call, door, args))


@router.post(
    "/prioritize",
    response_model=list[HostPriority],
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403, 413, 415, 422),
    openapi_extra=EXTENDER_ARGS,
)
async def extender_prioritize(
    request: Request,
    door: DoorDep,
    policy: Annotated[
        Literal["pack", "spread", "least-fragmentation"],
        Query(description="nfvplace's placement policy the nodes are scored by"),
    ] = "pack",
) -> JSONResponse:
    """Each node's score from the same decision as filter: 0 where filter refuses, 1 to 10 where
    it keeps, by the policy (nothing is assumed)."""
    document = await read_document(request)
    try:
        args = read_args(document.data)
    except ExtenderInputError as exc:
        raise ProblemError(422, errors.SERVICE_INVALID_REQUEST, str(exc)) from exc
    return JSONResponse(await run_in_threadpool(prioritize_call, door, args, policy))


BINDING_ARGS = {
    "requestBody": {
        "required": True,
        "description": "`ExtenderBindingArgs` (k8s.io/kube-scheduler/extender/v1): the pod "
        "kube-scheduler chose a node for, and that node",
        "content": {
            "application/json": {
                "schema": {
                    "title": "ExtenderBindingArgs",
                    "type": "object",
                    "required": ["PodName", "PodNamespace", "PodUID", "Node"],
                    "properties": {
                        "PodName": {"type": "string"},
                        "PodNamespace": {"type": "string"},
                        "PodUID": {"type": "string"},
                        "Node": {"type": "string"},
                    },
                }
            }
        },
    }
}


class ExtenderBindingResult(BaseModel):
    """`ExtenderBindingResult`: empty `Error` when the pod is bound."""

    Error: str = ""


@router.post(
    "/bind",
    response_model=ExtenderBindingResult,
    dependencies=[Depends(require("placer"))],
    responses=problems(401, 403, 413, 415, 422),
    openapi_extra=BINDING_ARGS,
)
async def extender_bind(
    request: Request,
    door: DoorDep,
    assume_s: Annotated[
        float,
        Query(
            ge=0,
            le=86400,
            description="How long the pod stays assumed on its node at most, while the node's "
            "NodeResourceTopology does not show it (0: never assumed)",
        ),
    ] = 300.0,
) -> JSONResponse:
    """Bind the pod to the node kube-scheduler chose (a Binding through the API server), after
    checking again that the node's kubelet admits it; the pod is then assumed on that node only.
    A bind that fails leaves nothing behind."""
    document = await read_document(request)
    try:
        args = read_binding(document.data)
    except ExtenderInputError as exc:
        return JSONResponse({"Error": f"{errors.SERVICE_INVALID_REQUEST}: {exc}"})
    client = request.app.state.kube_client
    if client is None:
        return JSONResponse(
            {
                "Error": f"{errors.KUBERNETES_NO_CLUSTER}: nfvplace serve was started without "
                "--kubeconfig FILE or --in-cluster, so it cannot create the Binding"
            }
        )
    answer = await run_in_threadpool(
        bind_call,
        door,
        args,
        partial(k8s_cluster.read_pod, client),
        partial(k8s_cluster.bind, client),
        assume_s,
    )
    return JSONResponse(answer)


class ExtenderStatus(BaseModel):
    """The door's link to the cluster (`nfvplace serve --kubeconfig` or `--in-cluster`)."""

    binding: bool = Field(description="The bind verb can create Bindings")
    watch: dict[str, Any] | None = Field(
        None,
        description="The server's watch (one worker watches; the others read what it writes): "
        "`synced` lists (nodeResourceTopologies, pods), how many nodes and pods it knows, "
        "restarts and the last error; null without a cluster, or before the watch starts",
    )
    unregistered_nodes: Literal["refuse", "pass"]


@router.get(
    "/status",
    response_model=ExtenderStatus,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403),
)
def extender_status(request: Request) -> dict[str, Any]:
    """Whether nfvplace can bind, and what its watch of the cluster has read."""
    state = request.app.state
    watch = getattr(state, "kube_watch", None)
    binding = getattr(state, "kube_client", None) is not None
    return {
        "binding": binding,
        "watch": watch.state.as_json() if watch is not None else k8s_cluster.shared_status(),
        "unregistered_nodes": state.settings.unregistered_nodes,
    }


@router.get(
    "/assumptions",
    response_model=AssumedPodList,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403),
)
def list_assumptions(store: StoreDep) -> dict[str, Any]:
    """The pods the extender admitted that the nodes' NodeResourceTopology does not show yet, and
    the pods that left a node whose NodeResourceTopology does not show them gone yet."""
    now = utc_now()
    departed = DepartedPods(store.engine).on_nodes(now - timedelta(seconds=PRUNED_S))
    return {
        "pods": [p.as_json() for p in AssumedPods(store.engine).live(now)],
        "departed": [p.as_json() for pods in departed.values() for p in pods],
    }


@router.delete(
    "/assumptions/{uid}",
    status_code=204,
    response_class=Response,
    dependencies=[Depends(require("placer"))],
    responses=problems(401, 403, 404),
)
def delete_assumption(
    uid: Annotated[str, Path(min_length=1, max_length=128, description="The pod's UID")],
    store: StoreDep,
) -> Response:
    """Forget a pod's assumption (the pod is gone)."""
    if not AssumedPods(store.engine).drop(uid, counting=True):  # as GET lists them
        raise ProblemError(404, errors.KUBERNETES_NOT_ASSUMED, f"no pod {uid!r} is assumed")
    return Response(status_code=204)
