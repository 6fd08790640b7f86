"""`POST /v1/evaluations`: every candidate host's answer for one VM, hosts given inline.

For schedulers that pick the host themselves (Nova's filter and weigher,
`nfvplace.integrations.nova`): the body carries the VM (a VM Descriptor, or a dialect's VM with
`"dialect"`) and the scheduler's current view of its candidate hosts (CHDs, not the inventory);
the answer is, per host and in the order given, whether it fits, a 0-100 score, the reasons it does
not fit and the configuration it would get. Nothing is claimed and nothing is stored.

The VM goes through the gate every door uses (schema, dialect reader, lint: what `lint` refuses is
a 422 with its findings); each host is validated as a CHD. A host's answer depends on that host
alone, and a scheduler asks again and again about the same hosts, of which one or two changed since
its last request: answers are kept per (VM, host as sent, id aside), so that hosts seen before,
and identical hosts in one request, are solved once. A host it sent before goes by its id and the
digest of its CHD (`service/host_refs.py`), and the body may be gzip-compressed: a request about
a thousand hosts, few of them changed, is small. The route's body limit is its own
(`--max-evaluation-body`, 16 MiB on the wire; 64 MiB decompressed).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError
from pydantic_core import from_json, to_json
from starlette.concurrency import run_in_threadpool

from ... import errors
from ...dialects import DIALECT_NAMES
from ...errors import NfvplaceError
from ...models.chd import ComputeHostDescriptor
from ...models.loading import MAX_NODES, SourceDocument, check_json_shape, gc_paused
from ...models.vmd import VmDescriptor
from ...placement import HostEvaluation, evaluate, index_of
from ...placement.engine.evaluate import scored
from ...placement.options import Options, parse_options
from .. import host_columns
from ..auth import require
from ..body import gunzip, parse_body, read_bytes
from ..descriptors import parse_descriptor, schema_findings
from ..host_refs import HostRef, is_ref, resolve, unknown_refs
from ..problems import ProblemError
from ..settings import MAX_EVALUATION_JSON_BYTES
from .common import FastJSONResponse, problems

router = APIRouter(prefix="/v1/evaluations", tags=["evaluations"])

MEMBERS = ("vm", "hosts", "dialect", "policy", "configurations")
MAX_HOSTS = 1000
KEPT_ANSWERS = 8192  # (VM, host) answers kept: a few fleets' worth for a few flavors


class HostAnswer(BaseModel):
    host: str
    fits: bool
    score: int = Field(description="0-100, higher is better (0 when it does not fit)")
    reasons: list[str] = Field(description="Why it does not fit, with numbers")
    configuration: dict[str, Any] | None = Field(
        description="The VM Configuration it would get there (nothing claimed)"
    )


class EvaluationView(BaseModel):
    hosts: list[HostAnswer] = Field(description="One answer per host, in the order given")


REQUEST_SCHEMA = {
    "title": "EvaluationRequest",
    "type": "object",
    "required": ["vm", "hosts"],
    "additionalProperties": False,
    "properties": {
        "vm": {
            "$ref": "#/components/schemas/VmDescriptor",
            "description": 'The VM (written in a dialect when "dialect" says so)',
        },
        "hosts": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_HOSTS,
            "items": {
                "anyOf": [
                    {"$ref": "#/components/schemas/ComputeHostDescriptor"},
                    {
                        "type": "object",
                        "required": ["id", "ref"],
                        "additionalProperties": False,
                        "properties": {
                            "id": {"type": "string"},
                            "ref": {
                                "type": "string",
                                "description": "sha256 of the CHD's canonical JSON, id aside",
                            },
                            "chd": {
                                "type": "object",
                                "description": "The CHD without its id, when the service may "
                                "not hold it (a 409 names those it does not); a node's `cpus` "
                                "and a port's `vfs` may be columns: {field: [value per row], "
                                '"template": [index per row], "templates": [other fields]}',
                            },
                        },
                    },
                ]
            },
            "description": "The candidate hosts as the scheduler sees them now (not the inventory): "
            "CHDs, or hosts by the digest of their CHD",
        },
        "dialect": {"type": "string", "enum": ["nfvplace", *DIALECT_NAMES]},
        "policy": {"type": "string", "description": "Placement policy, e.g. `pack` or `spread`"},
        "configurations": {
            "type": "boolean",
            "default": True,
            "description": "false: answers without the VM Configuration (a scheduler that only "
            "filters and weighs reads a thousand answers)",
        },
    },
}


def _invalid(message: str) -> ProblemError:
    return ProblemError(422, errors.SERVICE_INVALID_REQUEST, message)


@lru_cache(maxsize=256)
def _vm(text: str, dialect: str | None) -> VmDescriptor:
    """The request's VM through the gate (kept by its text: a scheduler asks about few flavors)."""
    inner = SourceDocument(data=json.loads(text), source="body.vm")
    return parse_descriptor(inner, VmDescriptor, "VM Descriptor", at=("vm",), dialect=dialect)


@dataclass(frozen=True)
class _Answer:
    """One host shape's answer: its policy rank and its JSON form (for the host it was asked of)."""

    rank: int | None
    host: str
    json: dict[str, Any]

    def for_host(self, host_id: str, score: int) -> dict[str, Any]:
        out = dict(self.json, score=score)
        if host_id != self.host:  # another host of the same shape: the same answer, its own id
            out["host"] = host_id
            config = out.get("configuration")
            if config is not None:
                instance = str(config.get("instance", ""))
                out["configuration"] = dict(
                    config,
                    host=host_id,
                    instance=instance.replace(f"@{self.host}-", f"@{host_id}-", 1),
                )
        return out


class _Answers:
    """Answers per (VM, policy, host shape), the least recently used dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: OrderedDict[tuple[str, bytes], _Answer] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[str, bytes]) -> _Answer | None:
        with self.lock:
            found = self.kept.get(key)
            if found is not None:
                self.kept.move_to_end(key)
            return found

    def put(self, key: tuple[str, bytes], answer: _Answer) -> None:
        with self.lock:
            self.kept[key] = answer
            while len(self.kept) > self.size:
                self.kept.popitem(last=False)


ANSWERS = _Answers(KEPT_ANSWERS)


def _envelope(body: Any) -> tuple[str, str | None, list[Mapping[str, Any]], Options]:
    if not isinstance(body, Mapping):
        raise _invalid('the body must be {"vm": ..., "hosts": [CHD, ...]}')
    unknown = sorted(str(k) for k in body if k not in MEMBERS)
    if unknown or "vm" not in body or "hosts" not in body:
        raise _invalid(
            f'give "vm" and "hosts" (and optionally "dialect", "policy", "configurations"); '
            f"{unknown}"
        )
    hosts = body["hosts"]
    if not isinstance(hosts, list) or not 1 <= len(hosts) <= MAX_HOSTS:
        raise _invalid(f'"hosts" must be a list of 1 to {MAX_HOSTS} CHDs')
    dialect = body.get("dialect")
    if dialect is not None and dialect not in ("nfvplace", *DIALECT_NAMES):
        raise _invalid(f'"dialect" must be one of {["nfvplace", *DIALECT_NAMES]}, got {dialect!r}')
    if not isinstance(body["vm"], Mapping):
        raise _invalid('"vm" must be an object')
    policy = body.get("policy", "pack")
    if not isinstance(policy, str):
        raise _invalid('"policy" must be a string such as "pack" or "spread"')
    options = parse_options(policy=policy)  # an unknown policy is nfvplace.placement.invalid_policy
    # a YAML body may hold dates and such: the VM's text only keys it, and is read back as JSON
    return json.dumps(body["vm"], sort_keys=True, default=str), dialect, hosts, options


def _shape(index: int, host: Any) -> tuple[str, bytes]:
    """A host's id and its shape: the CHD as sent, id aside (identical hosts share an answer)."""
    if not isinstance(host, Mapping) or not isinstance(host.get("id"), str):
        raise _invalid(f"hosts[{index}] must be a CHD with an id")
    return host["id"], to_json({k: v for k, v in host.items() if k != "id"})


def _chd(index: int, host: Mapping[str, Any]) -> ComputeHostDescriptor:
    if host_columns.has_columns(host):  # the Nova filter's: rows kept as models, or the long way
        model = host_columns.model_of(host)
        if model is not None:
            return model
        host = host_columns.rows_of(index, host)
    try:
        return ComputeHostDescriptor.model_validate(host)
    except ValidationError as exc:
        document = SourceDocument(data=dict(host), source=f"body.hosts[{index}]")
        findings = schema_findings(exc, ComputeHostDescriptor, document, at=("hosts", index))
        raise ProblemError(
            422,
            errors.INPUT_INVALID,
            f"hosts[{index}] is not a valid CHD",
            extra={"findings": findings},
        ) from exc


def _held(index: int, host: Any) -> ComputeHostDescriptor:
    """The CHD of hosts[index]: read and kept with the host the first time it is given by
    reference (kept objects also find their fleet index again, `placement.index.cache`)."""
    if not isinstance(host, HostRef):
        return _chd(index, host)
    model = host.kept()
    if model is None:
        model = _chd(index, host.chd())
        host.keep(model)
    return model


def _request_hosts(hosts: list[Any]) -> tuple[list[tuple[str, bytes]], list[Any]]:
    """Each host's (id, shape key) and what it was given as (a CHD, or a `HostRef`); a 409
    naming the digests this service does not hold."""
    shapes: list[tuple[str, bytes]] = []
    given: list[Any] = []
    unknown: list[str] = []
    for index, host in enumerate(hosts):
        if not is_ref(host):
            shapes.append(_shape(index, host))
            given.append(host)
            continue
        found = resolve(index, host)
        if isinstance(found, str):
            unknown.append(found)
        else:
            shapes.append((found.id, b"ref:" + found.ref.encode()))
            given.append(found)
    if unknown:
        raise unknown_refs(unknown)
    return shapes, given


def evaluate_request(body: Any) -> list[dict[str, Any]]:
    """Every host's answer (the route's work, off the event loop)."""
    vm_text, dialect, hosts, options = _envelope(body)
    configurations = body.get("configurations", True)
    if not isinstance(configurations, bool):
        raise _invalid('"configurations" must be true or false')
    vm = _vm(vm_text, dialect)
    prefix = f"{dialect}|{options.policy.value}|{options.seed}|{vm_text}"
    shapes, given = _request_hosts(hosts)
    ids = [host_id for host_id, _ in shapes]
    if len(set(ids)) != len(ids):
        raise _invalid("host ids must be unique within a request")
    # answers without configurations are kept apart (a request that asks for them finds none
    # there); one with its configuration also answers a request without
    kept = (prefix,) if configurations else ("verdict|" + prefix, prefix)
    found: dict[bytes, _Answer] = {}
    missing: dict[bytes, int] = {}  # shape -> the first host of that shape
    for index, (_, shape) in enumerate(shapes):
        answer = next(filter(None, (ANSWERS.get((key, shape)) for key in kept)), None)
        if answer is not None:
            found[shape] = answer
        else:
            missing.setdefault(shape, index)
    if missing:
        # the held hosts keep their descriptors: the index shares them as they are; its columns
        # are filled for the kinds this VM's filter reads (another VM fills its own later)
        fleet = index_of([_held(i, given[i]) for i in missing.values()], share=False, lazy=True)
        answers = evaluate(
            fleet, vm, policy=options.policy, seed=options.seed, configurations=configurations
        )
        for shape, evaluation in zip(missing, answers, strict=True):
            found[shape] = _Answer(evaluation.rank, evaluation.host, evaluation.to_dict())
            ANSWERS.put((kept[0], shape), found[shape])
    ranks = [found[shape].rank for _, shape in shapes]
    scores = [a.score for a in scored(_ranked(ranks))]
    if not configurations:
        return [
            {**found[shape].json, "host": host_id, "score": score, "configuration": None}
            for (host_id, shape), score in zip(shapes, scores, strict=True)
        ]
    return [
        found[shape].for_host(host_id, score)
        for (host_id, shape), score in zip(shapes, scores, strict=True)
    ]


def _ranked(ranks: list[int | None]) -> list[HostEvaluation]:
    """Placeholders carrying the ranks, for `scored` (the one mapping of ranks to 0-100)."""
    return [HostEvaluation("", rank is not None, 0, rank=rank) for rank in ranks]


@router.post(
    "",
    response_model=EvaluationView,
    dependencies=[Depends(require("reader"))],
    responses=problems(401, 403, 409, 413, 415, 422),
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": '{"vm": VM Descriptor (or a dialect\'s VM with "dialect"), '
            '"hosts": [CHD, ...]}',
            "content": {
                "application/json": {"schema": REQUEST_SCHEMA},
                "application/yaml": {"schema": REQUEST_SCHEMA},
            },
        }
    },
)
async def evaluate_hosts(request: Request) -> JSONResponse:
    """Every candidate host's answer for the VM: fits, score, reasons, configuration (nothing
    is claimed; the hosts are the caller's, not the inventory)."""
    raw = await read_bytes(request, request.app.state.settings.max_evaluation_body_bytes)
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding == "gzip":
        raw = gunzip(raw, MAX_EVALUATION_JSON_BYTES)
    elif encoding != "identity":
        raise _invalid(f"Content-Encoding {encoding!r} is not supported; send gzip or identity")
    return FastJSONResponse({"hosts": await run_in_threadpool(_answer, raw, media)})


def _answer(raw: bytes, media: str) -> list[dict[str, Any]]:
    # a hundred hosts are a hundred thousand small objects and no cycles: collecting while they
    # are built cost as much as reading them; those kept (held hosts, rows, answers) stay unwalked
    with gc_paused(lasting=True):
        return evaluate_request(_body(raw, media))


def _body(raw: bytes, media: str) -> Any:
    """The request body. A JSON body is bounded per document (the VM, each host), as if each were
    sent alone: a hundred real hosts hold more values than one document may; anything the fast
    reading refuses (and YAML) goes through the service's own reading, its errors and bounds."""
    if media in ("application/json", ""):
        try:
            body = from_json(raw)
        except ValueError:
            body = None
        if isinstance(body, Mapping) and isinstance(body.get("hosts"), list):
            # values in the whole body (a colon or comma for each but one), against the bound of
            # one document per host; the VM is checked as a document of its own (depth too)
            values = raw.count(b",") + raw.count(b":")
            if values > MAX_NODES * (1 + len(body["hosts"])):
                raise NfvplaceError(
                    errors.INPUT_TOO_LARGE,
                    f"the body holds more than {MAX_NODES:,} values (YAML/JSON nodes) per host",
                    file="body",
                )
            check_json_shape(body.get("vm"), "body.vm")
            return body
    return parse_body(raw, media).data
