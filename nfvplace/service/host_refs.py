"""Hosts a scheduler sent before, kept by the digest of their CHD (`POST /v1/evaluations`).

A scheduler asks about up to a thousand hosts at each request, and few changed since its last one.
It sends a host it sent before as `{"id", "ref"}` (the sha256 of the CHD's canonical JSON, id
aside: `json.dumps(chd, sort_keys=True, separators=(",", ":"))`), and one the service may not hold
as `{"id", "ref", "chd"}`; the service checks the digest of what it was sent in full (a host is
never kept under another's digest), keeps it, and answers 409 `nfvplace.service.unknown_host_ref`
naming the digests it does not hold (restarted, another worker, forgotten), which the scheduler
then sends in full. Identical hosts share one digest, and one answer per VM.

The store is per worker process, in memory, the least recently used forgotten first: the cost of a
miss is one more request, never a wrong answer. The last `KEPT_MODELS` hosts read also keep their
validated CHD: another flavor over the same hosts reads none of them again, and finds the fleet
index built for them by their identity (`placement.index.cache`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_json

from .. import errors
from ..models.chd import ComputeHostDescriptor
from .problems import ProblemError

KEPT_HOSTS = 4096  # a fleet of a thousand hosts, each in a few states
KEPT_MODELS = 1024  # of them validated (a request's worth: Nova asks about 1,000 at most)
MEMBERS = ("id", "ref", "chd")


def digest_of(chd: Mapping[str, Any]) -> tuple[str, bytes]:
    """The digest of a CHD (id aside) and its canonical JSON: the protocol's definition, which
    the Nova plug-ins' client computes the same way (`nfvplace.integrations.nova.client.digest`,
    kept apart so that the plug-ins need the standard library only; the tests send its digests
    here)."""
    text = json.dumps(
        {k: v for k, v in chd.items() if k != "id"}, sort_keys=True, separators=(",", ":")
    ).encode()
    return hashlib.sha256(text).hexdigest(), text


class HeldHost:
    """A host the service holds: its CHD (id aside) as canonical JSON, and once read, the CHD
    validated under the id it was last asked with (a scheduler's thousand hosts are read once,
    not at each new flavor)."""

    __slots__ = ("model", "text")

    def __init__(self, text: bytes) -> None:
        self.text = text
        self.model: ComputeHostDescriptor | None = None


class _Store:
    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: OrderedDict[str, HeldHost] = OrderedDict()
        self.modelled: OrderedDict[str, HeldHost] = OrderedDict()  # those holding their model
        self.lock = threading.Lock()

    def get(self, ref: str) -> HeldHost | None:
        with self.lock:
            found = self.kept.get(ref)
            if found is not None:
                self.kept.move_to_end(ref)
            return found

    def put(self, ref: str, text: bytes) -> HeldHost:
        with self.lock:
            found = self.kept.get(ref)
            if found is None:  # the same digest is the same text: keep what was read of it
                found = self.kept[ref] = HeldHost(text)
            self.kept.move_to_end(ref)
            while len(self.kept) > self.size:
                self.kept.popitem(last=False)
            return found

    def keep_model(self, ref: str, held: HeldHost, model: ComputeHostDescriptor) -> None:
        """Keep `model` with the host; past `KEPT_MODELS` hosts the least recently read forgets
        its model (a host read back costs about 1 ms and 110 KiB held)."""
        with self.lock:
            held.model = model
            self.modelled[ref] = held
            self.modelled.move_to_end(ref)
            while len(self.modelled) > KEPT_MODELS:
                self.modelled.popitem(last=False)[1].model = None


HOSTS = _Store(KEPT_HOSTS)


@dataclass(frozen=True)
class HostRef:
    """A host of the request by reference: its id, its digest, what the service holds of it, and
    the CHD (id aside) when it came in full with this request."""

    id: str
    ref: str
    held: HeldHost
    given: Mapping[str, Any] | None = None

    def chd(self) -> dict[str, Any]:
        found = json.loads(self.held.text) if self.given is None else self.given
        return {**found, "id": self.id}

    def kept(self) -> ComputeHostDescriptor | None:
        """The CHD as validated before under this id, if it was."""
        model = self.held.model
        return model if model is not None and model.id == self.id else None

    def keep(self, model: ComputeHostDescriptor) -> None:
        HOSTS.keep_model(self.ref, self.held, model)


def is_ref(host: Any) -> bool:
    return isinstance(host, Mapping) and "ref" in host


def resolve(index: int, host: Mapping[str, Any]) -> HostRef | str:
    """A host given by reference, or its digest when the service does not hold it."""
    unknown = sorted(str(k) for k in host if k not in MEMBERS)
    host_id, ref = host.get("id"), host.get("ref")
    if unknown or not isinstance(host_id, str) or not isinstance(ref, str):
        raise ProblemError(
            422,
            errors.SERVICE_INVALID_REQUEST,
            f'hosts[{index}] must be a CHD, or {{"id", "ref"}} with "chd" (a CHD without its id) '
            f"when the service may not hold it; {unknown}",
        )
    chd = host.get("chd")
    if chd is None:
        held = HOSTS.get(ref)
        return ref if held is None else HostRef(host_id, ref, held)
    if not isinstance(chd, Mapping):
        raise ProblemError(
            422, errors.SERVICE_INVALID_REQUEST, f"hosts[{index}].chd must be an object"
        )
    # a client that sends the canonical JSON sends its keys sorted, and the body's reading keeps
    # their order: written back as read (in Rust) it is that JSON, hashed to `ref`; anything else
    # (an id inside, keys in another order, a float written otherwise) is checked the long way
    found, text = ref, b"" if "id" in chd else to_json(chd)
    if not text or hashlib.sha256(text).hexdigest() != ref:
        found, text = digest_of(chd)
    if found != ref:
        raise ProblemError(
            422,
            errors.SERVICE_INVALID_REQUEST,
            f"hosts[{index}].ref is not the digest of its chd (sha256 of its canonical JSON, "
            f"id aside: {found})",
        )
    return HostRef(host_id, ref, HOSTS.put(ref, text), chd)


def unknown_refs(refs: list[str]) -> ProblemError:
    """The 409 naming the digests the service does not hold."""
    refs = sorted(set(refs))
    return ProblemError(
        409,
        errors.SERVICE_UNKNOWN_HOST_REF,
        f"{len(refs)} hosts are given by a digest this service does not hold; send them again "
        'with "chd"',
        extra={"refs": refs},
    )
