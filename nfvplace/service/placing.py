"""Placing through the store: decide on the worker's index, commit with compare-and-swap, retry.

No HTTP here: the routers translate requests into `PlacementRequest` and answers into responses.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import os
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

from anyio import to_thread

from .. import errors
from ..models.vmd import VmDescriptor
from ..placement.result import Diagnosis, PlacementResult
from ..store import (
    IdempotentReplayError,
    PlacementRecord,
    StaleSnapshot,
    Store,
    WriteLockBusyError,
)
from ..store.db import JsonText
from ..store.faults import CommitOutcomeUnknownError
from ..store.records import json_text
from .answers import answer_json, configurations_json
from .ids import uuid4_hex
from .live import (
    INLINE_LOCK_WAIT_S,
    Ask,
    Decision,
    LiveIndex,
    Placer,
    Target,
    WouldBlockError,
    target_name,
)
from .logs import LOGGER, note
from .metrics import Metrics, PhaseClock
from .moves import room_by_moves
from .problems import ProblemError
from .refusals import NoFitDocument, refusal, shape_of


def canonical_body(body: Any) -> str:
    """A request body as its Idempotency-Key's hash reads it: JSON, keys sorted, no spaces."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class PlacementRequest:
    descriptor: Target
    body: Any  # the request body as sent, for the idempotency hash
    dry_run: bool = False
    policy: str = "pack"
    explain: bool = False
    moves: bool = False  # dry run of one VM: if it fits nowhere, moves of placed VMs that help
    # `canonical_body(body)` when it is known already (`shapes`: put together from a body of
    # this shape), so that a keyed request's hash need not sort the body again
    canonical: str | None = field(default=None, repr=False, compare=False)
    # the stored descriptor (`stored_descriptor`) when it is known already (`shapes` again)
    stored: JsonText | None = field(default=None, repr=False, compare=False)

    # Both computed once per request object, which the router keeps per distinct body: an
    # orchestrator sending the same descriptor again pays for neither.
    @cached_property
    def request_hash(self) -> str:
        """What an Idempotency-Key's replay is checked against (computed only for keyed requests)."""
        canonical = canonical_body(self.body) if self.canonical is None else self.canonical
        return hashlib.sha256(canonical.encode()).hexdigest()

    @cached_property
    def stored_descriptor(self) -> JsonText:
        """The descriptor as the store keeps it with the placement (see `vm_descriptors`)."""
        if self.stored is not None:
            return self.stored
        descriptor = self.descriptor
        if not isinstance(descriptor, tuple):
            return JsonText(descriptor.model_dump_json(by_alias=True, exclude_none=True))
        batch = [
            {
                "vm": item.vm.model_dump(mode="json", by_alias=True, exclude_none=True),
                "count": item.count,
            }
            for item in descriptor
        ]
        return json_text({"batch": batch})


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any] | bytes  # bytes: JSON rendered already
    headers: dict[str, str] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        """The body as a dict (parsed when it was rendered already)."""
        parsed: dict[str, Any] = (
            json.loads(self.body) if isinstance(self.body, bytes) else self.body
        )
        return parsed


def new_placement_id() -> str:
    return "pl-" + uuid4_hex()


def _known(request: PlacementRequest) -> tuple[VmDescriptor, str] | None:
    """A single VM's descriptor and its stored JSON (`configurations_json`): of the very class
    a configuration's `descriptor` field writes, so that the two texts are one."""
    descriptor = request.descriptor
    if type(descriptor) is VmDescriptor:
        return descriptor, request.stored_descriptor
    return None


def _explanation(request: PlacementRequest, result: PlacementResult) -> dict[str, Any]:
    return {"explanation": list(result.explanation)} if request.explain else {}


DRY_RUN_ID = "dry-run"  # a dry run's instances are named after no placement (ids are generated)


def owner_name(placement_id: str, descriptor: Target) -> str:
    """The instance id the engine claims with: `<placement id>/<vm>` for a VM; the instances of a
    VNF or a batch are `<placement id>/<template>.<member>-<k>` (`<placement id>/<member>-<k>`)."""
    if isinstance(descriptor, VmDescriptor):
        return f"{placement_id}/{descriptor.name}"
    return placement_id


class Placements:
    def __init__(
        self,
        store: Store,
        placer: Placer,
        metrics: Metrics,
        max_attempts: int,
        on_index_built: Callable[[], object] | None = None,
        placing_threads: int = 1,
    ) -> None:
        self.store = store
        self.placer = placer
        self.metrics = metrics
        self.max_attempts = max_attempts
        self.live = LiveIndex(
            store, placer, PhaseClock(metrics.charge), metrics.hosts_read.inc, on_index_built
        )
        # ties between equally good hosts are broken per process on retries, so that workers and
        # replicas that lost a race to each other do not pick the same host again
        self._retry_seed = os.getpid()
        # A worker's claiming placements run on threads of their own, in the order they came:
        # one on SQLite, which takes one writer at a time (more threads would only take turns on
        # the index's lock and then on SQLite's write lock), `placing_threads` on PostgreSQL,
        # where a placement waits for its commit's round trips but more threads than that spend
        # more on the interpreter's lock than they gain (docs/benchmarks.md, "Settings").
        self._inline = store.engine.dialect.name == "sqlite"
        self._placing = ThreadPoolExecutor(
            1 if self._inline else placing_threads, thread_name_prefix="nfvplace-placing"
        )
        self._turn = asyncio.Lock()

    async def place_async(self, request: PlacementRequest, key: str | None) -> Answer:
        """`place` for the event loop: a dry run on a thread of the shared pool; a claiming
        placement on the worker's placing threads, or (a single VM on SQLite) on the event loop
        itself where it cannot wait (`place_inline`)."""
        if request.dry_run:
            return await to_thread.run_sync(self.place, request, key)
        if not self._inline:
            return await self._on_placing_thread(request, key)
        # One claiming placement at a time, in the order they came: on the event loop, or on the
        # placing thread while the others wait their turn (a placement handed over never has
        # the next ones find its commit in flight and be handed over in turn).
        async with self._turn:
            if isinstance(request.descriptor, VmDescriptor):
                answer = self.place_inline(request, key)
                if answer is not None:
                    return answer
            return await self._on_placing_thread(request, key)

    async def _on_placing_thread(self, request: PlacementRequest, key: str | None) -> Answer:
        context = contextvars.copy_context()  # the request's log fields go with it
        loop = asyncio.get_running_loop()
        placing = partial(context.run, self.place, request, key)
        return await loop.run_in_executor(self._placing, placing)

    def place_inline(self, request: PlacementRequest, key: str | None) -> Answer | None:
        """One attempt of `place` on the calling thread (the event loop), for a single VM where
        nothing waits long: the index is built, no host is to be read, the index is not another
        thread's for more than `live.LOCK_WAIT_S`, no commit of the host is in flight, SQLite's
        write lock is not another's for more than `INLINE_LOCK_WAIT_S` and no race is lost (None
        otherwise, nothing claimed: the caller then places on the placing thread, which waits).

        Handing every placement to the placing thread cost two thread switches and the GIL
        passed back and forth with the event loop (about thirty futex calls per placement): on
        the 1,000-host benchmark, in rounds paired with the placing thread alone, this took 6 %
        less CPU per placement with one worker and 11 % less with two."""
        try:
            return self.place(request, key, inline=True)
        except WouldBlockError:
            return None

    def close(self) -> None:
        """Stop the placing threads (placements queued and not started are dropped)."""
        self._placing.shutdown(wait=False, cancel_futures=True)

    def _replay(self, record: PlacementRecord, request: PlacementRequest) -> Answer:
        if record.request_hash != request.request_hash:
            self.metrics.placed("invalid")
            raise ProblemError(
                422,
                errors.PLACEMENT_IDEMPOTENCY_KEY_REUSED,
                "this Idempotency-Key was used for a different request",
                extra={"placement": record.id},
            )
        if record.released:
            self.metrics.placed("invalid")
            raise ProblemError(
                409,
                errors.PLACEMENT_RELEASED,
                f"this Idempotency-Key placed {record.id}, which was released since; send the "
                "request again with a new key to place it again",
                extra={"placement": record.id},
            )
        self.metrics.placed("replayed")
        return Answer(201, dict(record.response), {"Idempotent-Replayed": "true"})

    def place(
        self, request: PlacementRequest, idempotency_key: str | None, inline: bool = False
    ) -> Answer:
        """Up to `max_attempts` tries, each `decide` (on the index), then for a claiming
        placement `_commit` (to the store) and `finish` (the index told how it ended)."""
        # An Idempotency-Key is checked where the database enforces it: the commit of a key used
        # before fails (IdempotentReplayError) and nothing is claimed. It is looked up only when
        # the request cannot be placed, where a replay must still get the first answer: a lookup
        # before every placement cost a query (a round trip on PostgreSQL) for the rare retry.
        key = None if request.dry_run else idempotency_key
        for attempt in range(1 if inline else self.max_attempts):
            placement_id = DRY_RUN_ID if request.dry_run else new_placement_id()
            try:
                decision = self.live.decide(
                    self._ask(request, placement_id, attempt),
                    claim=not request.dry_run,
                    narrow=isinstance(request.descriptor, VmDescriptor) and not request.dry_run,
                    reads=not inline,
                )
            except StaleSnapshot as exc:
                self._lost(attempt, exc, inline)
                continue
            result = decision.result
            if not result.ok:
                return self._not_placed(request, decision, key)
            configs = configurations_json(result.configurations, _known(request))
            if request.dry_run:
                self.metrics.placed("dry_run")
                body = answer_json({"dry_run": True}, configs, _explanation(request, result))
                return Answer(200, body)
            response = answer_json({"id": placement_id}, configs, _explanation(request, result))
            try:
                landed = False
                try:
                    self._commit(request, key, placement_id, (response, configs), decision, inline)
                    landed = True
                finally:  # before a lost race is handled: the commits after it go on at once
                    self.live.finish(decision, landed)
            except WriteLockBusyError as exc:  # inline only: the placing thread will wait
                raise WouldBlockError("SQLite's write lock is held") from exc
            except StaleSnapshot as exc:
                self._lost(attempt, exc, inline)
                continue
            except IdempotentReplayError as exc:
                return self._replay(exc.placement, request)
            except CommitOutcomeUnknownError as exc:
                exc.extra["placement"] = placement_id  # stored or not: a replay of the key says
                raise
            self.metrics.placed("placed")
            note("placed", placement=placement_id, hosts=sorted(result.hosts))
            return Answer(201, response, {"Location": f"/v1/placements/{placement_id}"})
        return self._outrun(request, key)

    def _ask(self, request: PlacementRequest, placement_id: str, attempt: int) -> Ask:
        """What the engine is asked for `request` on its `attempt`-th try."""
        options = {
            "policy": request.policy,
            "seed": 0 if attempt == 0 else self._retry_seed + attempt,
            "explain": request.explain,
            "instance": owner_name(placement_id, request.descriptor),
        }
        return Ask(request.descriptor, options)

    def _outrun(self, request: PlacementRequest, key: str | None) -> Answer:
        """Every attempt lost to other writers: its key's first answer (a retry), else 409."""
        first = self._placed_with(key)
        if first is not None:
            return self._replay(first, request)
        self.metrics.placed("conflict")
        raise ProblemError(
            409,
            errors.PLACEMENT_CONCURRENT_UPDATE,
            f"hosts changed under this placement {self.max_attempts} times; retry the request",
        )

    def _not_placed(self, request: PlacementRequest, decision: Decision, key: str | None) -> Answer:
        """A request no host fits: moves that make room (a dry run that asks for them), the
        first answer of its key's placement (a retry on a full fleet), else 409 no_fit."""
        if request.moves:
            assert isinstance(request.descriptor, VmDescriptor)
            advice = room_by_moves(self.store, request.descriptor, request.policy)
            if advice is not None:
                self.metrics.placed("dry_run")
                return Answer(200, advice)
        first = self._placed_with(key)
        if first is not None:
            return self._replay(first, request)
        raise self._no_fit(request, decision)

    def _placed_with(self, key: str | None) -> PlacementRecord | None:
        """The placement `key` made before, if any."""
        return None if key is None else self.store.find_by_key(key)

    def _lost(self, attempt: int, exc: StaleSnapshot, inline: bool) -> None:
        """A race lost (or a host not read since a failed read): count it, back off a little
        (inline: WouldBlockError, the next attempt is the placing thread's)."""
        self.metrics.conflicts.inc()
        LOGGER.info("placement conflict", extra={"attempt": attempt, "reason": str(exc)})
        if inline:
            raise WouldBlockError("lost a race") from exc
        time.sleep(random.uniform(0, min(0.001 * 2**attempt, 0.05)))

    def _commit(
        self,
        request: PlacementRequest,
        idempotency_key: str | None,
        placement_id: str,
        stored: tuple[bytes, bytes],  # the answer and the configurations, as JSON
        decision: Decision,
        inline: bool,
    ) -> None:
        """`decision` stored, once the earlier commits it builds on have landed: compare-and-swap
        on the generations it names (StaleSnapshot when another writer came first)."""
        decision.wait_for_earlier()
        self.live.clock.start()
        try:
            self.store.commit_placement(
                placement_id=placement_id,
                idempotency_key=idempotency_key,
                request_hash="" if idempotency_key is None else request.request_hash,
                response=JsonText(stored[0].decode()),
                configurations=decision.result.configurations,
                configurations_json=JsonText(stored[1].decode()),
                snapshot=decision.base,
                name=target_name(request.descriptor)[:255],
                descriptor=request.stored_descriptor,
                lock_timeout_s=INLINE_LOCK_WAIT_S if inline else None,
            )
        finally:
            self.live.clock.spent("commit")
            self.live.clock.charge_spent()

    def _no_fit(self, request: PlacementRequest, decision: Decision) -> ProblemError:
        """409 no_fit, with the diagnosis (counted in the metrics): a single VM's rejections
        joined from those of its earlier refusals where its hosts did not change (`refusals`)."""
        self.metrics.placed("no_fit")
        diagnosis = decision.result.diagnosis
        if diagnosis is None:
            return ProblemError(409, errors.PLACEMENT_NO_FIT, "no host fits (no diagnosis given)")
        kept = self._kept_refusal(request, decision, diagnosis)
        if kept is not None:
            document, reasons, last = kept.document, kept.reasons, kept.rejections
        else:
            document = diagnosis.to_dict()  # read from the rows: no Rejection made per host
            rejections: list[dict[str, Any]] = document["rejections"]  # type: ignore[assignment]
            reasons, last = frozenset(r["reason"] for r in rejections), None
        for reason in sorted(reasons):
            self.metrics.no_fit_reasons.labels(reason).inc()
        return ProblemError(
            409,
            errors.PLACEMENT_NO_FIT,
            diagnosis.summary,
            extra={"diagnosis": document},
            last=last,
        )

    def _kept_refusal(
        self, request: PlacementRequest, decision: Decision, diagnosis: Diagnosis
    ) -> NoFitDocument | None:
        shape = shape_of(request.descriptor, {"policy": request.policy, "explain": request.explain})
        if shape is None or decision.versions is None:
            return None
        return refusal(diagnosis, self.live.refusals.view(shape, decision.versions))
