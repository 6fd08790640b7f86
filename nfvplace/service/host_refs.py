"""Hosts a scheduler sent before, kept by the digest of their CHD (`POST /v1/evaluations`).

A scheduler asks about up to a thousand hosts at each request, and few changed since its last one.
It sends a host it sent before as `{"id", "ref"}` (the sha256 of the CHD's canonical JSON, id
aside: `json.dumps(chd, sort_keys=True, separators=(",", ":"))`), and one the service may not hold
as `{"id", "ref", "chd"}`; the service checks the digest of what it was sent in full (a host is
never kept under another's digest), keeps it, and answers 409 `nfvplace.service.unknown_host_ref`
naming the digests it does not hold (restarted, another worker, forgotten), which the scheduler
then sends in full. Identical hosts share one digest, and one answer per VM.

The store is per worker process, in memory, the least recently used forgotten first: the cost of a
miss is one more request, never a wrong answer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import errors
from .problems import ProblemError

KEPT_HOSTS = 4096  # a fleet of a thousand hosts, each in a few states
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


class _Store:
    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: OrderedDict[str, bytes] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, ref: str) -> bytes | None:
        with self.lock:
            found = self.kept.get(ref)
            if found is not None:
                self.kept.move_to_end(ref)
            return found

    def put(self, ref: str, text: bytes) -> None:
        with self.lock:
            self.kept[ref] = text
            self.kept.move_to_end(ref)
            while len(self.kept) > self.size:
                self.kept.popitem(last=False)


HOSTS = _Store(KEPT_HOSTS)


@dataclass(frozen=True)
class HostRef:
    """A host of the request by reference: its id, its digest, and its CHD (id aside) as JSON."""

    id: str
    ref: str
    text: bytes

    def chd(self) -> dict[str, Any]:
        return {**json.loads(self.text), "id": self.id}


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
        text = HOSTS.get(ref)
        return ref if text is None else HostRef(host_id, ref, text)
    if not isinstance(chd, Mapping):
        raise ProblemError(
            422, errors.SERVICE_INVALID_REQUEST, f"hosts[{index}].chd must be an object"
        )
    found, text = digest_of(chd)
    if found != ref:
        raise ProblemError(
            422,
            errors.SERVICE_INVALID_REQUEST,
            f"hosts[{index}].ref is not the digest of its chd (sha256 of its canonical JSON, "
            f"id aside: {found})",
        )
    HOSTS.put(ref, text)
    return HostRef(host_id, ref, text)


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
