"""Placing through the store: compute on a snapshot, commit with compare-and-swap, retry.

No HTTP here: the routers translate requests into `PlacementRequest` and answers into responses.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import errors
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from ..placement.batch import BatchItem
from ..placement.result import PlacementResult
from ..store import IdempotentReplayError, PlacementRecord, StaleSnapshot, Store
from .logs import LOGGER
from .metrics import Metrics
from .problems import ProblemError

Placer = Callable[..., PlacementResult]


@dataclass(frozen=True)
class PlacementRequest:
    descriptor: VmDescriptor | VnfTemplate | tuple[BatchItem, ...]
    body: Any  # the request body as sent, for the idempotency hash
    dry_run: bool = False
    policy: str = "pack"
    explain: bool = False

    @property
    def request_hash(self) -> str:
        canonical = json.dumps(self.body, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def new_placement_id() -> str:
    return "pl-" + uuid.uuid4().hex


def with_instances(
    placement_id: str, configurations: Sequence[VmConfiguration]
) -> list[VmConfiguration]:
    """Owner names unique to this placement: `<placement id>/<instance or vm>`."""
    seen: set[str] = set()
    out = []
    for index, config in enumerate(configurations):
        name = f"{placement_id}/{config.instance or config.vm}"
        if name in seen:
            name = f"{name}#{index}"
        seen.add(name)
        out.append(config.model_copy(update={"instance": name}))
    return out


def dump_configurations(configs: Sequence[VmConfiguration]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in configs]


def _explanation(request: PlacementRequest, result: PlacementResult) -> dict[str, Any]:
    return {"explanation": list(result.explanation)} if request.explain else {}


class Placements:
    def __init__(self, store: Store, placer: Placer, metrics: Metrics, max_attempts: int) -> None:
        self.store = store
        self.placer = placer
        self.metrics = metrics
        self.max_attempts = max_attempts
        # Threads of one process take turns from snapshot to commit: they would only conflict with
        # each other. Processes and replicas still race, and compare-and-swap settles that.
        self._turn = threading.Lock()

    def _replay(self, record: PlacementRecord, request: PlacementRequest) -> Answer:
        if record.request_hash != request.request_hash:
            self.metrics.placements.labels("invalid").inc()
            raise ProblemError(
                422,
                errors.PLACEMENT_IDEMPOTENCY_KEY_REUSED,
                "this Idempotency-Key was used for a different request",
                extra={"placement": record.id},
            )
        self.metrics.placements.labels("replayed").inc()
        return Answer(201, dict(record.response), {"Idempotent-Replayed": "true"})

    def _compute(
        self, hosts: Sequence[ComputeHostDescriptor], request: PlacementRequest
    ) -> PlacementResult:
        return self.placer(
            list(hosts), request.descriptor, policy=request.policy, seed=0, explain=request.explain
        )

    def place(self, request: PlacementRequest, idempotency_key: str | None) -> Answer:
        if idempotency_key is not None and not request.dry_run:
            first = self.store.find_by_key(idempotency_key)
            if first is not None:
                return self._replay(first, request)
        with self._turn:
            return self._place(request, idempotency_key)

    def _place(self, request: PlacementRequest, idempotency_key: str | None) -> Answer:
        for attempt in range(self.max_attempts):
            snapshot = self.store.snapshot()
            result = self._compute(list(snapshot.hosts.values()), request)
            if not result.ok:
                self._no_fit(result)
            if request.dry_run:
                self.metrics.placements.labels("dry_run").inc()
                return Answer(
                    200,
                    {
                        "dry_run": True,
                        "configurations": dump_configurations(result.configurations),
                        **_explanation(request, result),
                    },
                )
            placement_id = new_placement_id()
            configs = with_instances(placement_id, result.configurations)
            response = {
                "id": placement_id,
                "configurations": dump_configurations(configs),
                **_explanation(request, result),
            }
            try:
                self.store.commit_placement(
                    placement_id=placement_id,
                    idempotency_key=idempotency_key,
                    request_hash=request.request_hash,
                    response=response,
                    configurations=configs,
                    snapshot=snapshot,
                )
            except StaleSnapshot as exc:
                self.metrics.conflicts.inc()
                LOGGER.info("placement conflict", extra={"attempt": attempt, "reason": str(exc)})
                time.sleep(random.uniform(0, min(0.002 * 2**attempt, 0.1)))
                continue
            except IdempotentReplayError as exc:
                return self._replay(exc.placement, request)
            self.metrics.placements.labels("placed").inc()
            LOGGER.info(
                "placed",
                extra={"placement": placement_id, "hosts": sorted({c.host for c in configs})},
            )
            return Answer(201, response, {"Location": f"/v1/placements/{placement_id}"})
        self.metrics.placements.labels("conflict").inc()
        raise ProblemError(
            409,
            errors.PLACEMENT_CONCURRENT_UPDATE,
            f"hosts changed under this placement {self.max_attempts} times; retry the request",
        )

    def _no_fit(self, result: PlacementResult) -> None:
        self.metrics.placements.labels("no_fit").inc()
        diagnosis = result.diagnosis
        if diagnosis is None:
            raise ProblemError(409, errors.PLACEMENT_NO_FIT, "no host fits (no diagnosis given)")
        for reason in sorted({r.reason for r in diagnosis.rejections}):
            self.metrics.no_fit_reasons.labels(reason).inc()
        raise ProblemError(
            409,
            errors.PLACEMENT_NO_FIT,
            diagnosis.summary,
            extra={"diagnosis": diagnosis.to_dict()},
        )
