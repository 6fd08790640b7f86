"""Claims kept pending: a claimed host's descriptor built only when someone reads it.

A placement's claim changes the index's columns and the host's free resources at once (the kinds
work them out from the configuration, `FreeClaimed` with no claimed host), but the claimed
descriptor itself (a pydantic draft of the touched nodes, validated) is what a placement loop never
reads, or reads once after many placements: the index keeps the configurations claimed on the
descriptor it holds (`PendingClaims`), and the result the claims on the host as it was placed on
(`HostClaim`), each built with `claims.claim_all` when read. A claim is kept pending only where the
kinds proved it conflicts with nothing (every resource it takes is free in the free resources it
was placed with); any other is claimed on the built host at once, as `claims.claim` always did.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from ...claims import ClaimConflictError, claim_all
from ...errors import CLAIM_CONFLICT
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.vmd import VmDescriptor
from ..resources import implementing
from ..resources.base import HostFree
from ..resources.stages import Free, FreeClaimed

_FREE: tuple[Free[Any], ...] = implementing(Free)
_DELTAS: tuple[FreeClaimed[Any], ...] = implementing(FreeClaimed)
_CLAIMED = {kind.name: kind for kind in _DELTAS}


def built(
    base: ComputeHostDescriptor, configs: tuple[VmConfiguration, ...]
) -> ComputeHostDescriptor:
    """`base` with `configs` claimed in turn, validated once (what `claims.claim` of each in
    turn gives). Each was proved free when it was placed: an issue here is an internal error."""
    host, issues = claim_all(base, configs)
    if issues:
        raise ClaimConflictError(
            CLAIM_CONFLICT, f"a pending claim on {base.id} conflicts (please report)", issues=issues
        )
    return host


class PendingClaims:
    """The configurations claimed, in order, on the descriptor an index holds for a row, not yet
    applied to it; the claimed host is built once, when first read (`FleetIndex.hosts`). Also the
    row's version: the index's cached free resources of the row are those of this object."""

    __slots__ = ("built", "configs")

    def __init__(self, configs: tuple[VmConfiguration, ...]) -> None:
        self.configs = configs
        self.built: ComputeHostDescriptor | None = None

    def host(self, base: ComputeHostDescriptor) -> ComputeHostDescriptor:
        if self.built is None:  # two readers may both build it: the same host, one kept
            self.built = built(base, self.configs)
        return self.built


PENDING_VIEWS = 1024
"""Views (free resources) of rows with claims pending a plain index keeps aside once its views of
the rows read last let them go (about 5 KiB each); a compact index keeps as many as hot hosts
(`HostStore.hot_size`: a view holds its host's objects)."""


class PendingViews:
    """The free resources of rows whose claims are pending, kept when the index's views of the
    rows read last let them go: the claims pending worked them out (`HostClaim.free`), where
    reading such a row again would build its host (`claims.claim_all`, about 2 ms a host at
    10,000 hosts) to read it anew. The oldest are let go first."""

    __slots__ = ("_views",)

    def __init__(self) -> None:
        self._views: dict[int, tuple[PendingClaims, HostFree]] = {}

    def keep(self, i: int, version: object, free: HostFree, most: int) -> None:
        """Keep row i's view `free` if it is of claims pending (`version`), `most` kept."""
        if not isinstance(version, PendingClaims) or most <= 0:
            return
        self._views.pop(i, None)
        self._views[i] = (version, free)
        while len(self._views) > most:
            del self._views[next(iter(self._views))]

    def take(self, i: int, version: object) -> HostFree | None:
        """Row i's view kept (let go here), if it is of `version` (the claims pending on it now)."""
        kept = self._views.pop(i, None)
        return kept[1] if kept is not None and kept[0] is version else None

    def copy(self) -> PendingViews:
        clone = PendingViews()
        clone._views = dict(self._views)
        return clone

    def __len__(self) -> int:
        return len(self._views)


class HostClaim:
    """A placement's claim on one host: `base` with `configs` claimed in turn (the last is the
    placement's), built when first read. `on`: the version of the index's row it was placed on;
    `free`: the host's free resources once claimed (what `FleetIndex.take` keeps pending)."""

    __slots__ = ("_host", "base", "configs", "free", "on")

    def __init__(
        self,
        base: ComputeHostDescriptor,
        configs: tuple[VmConfiguration, ...],
        on: object,
        free: HostFree,
    ) -> None:
        self.base, self.configs, self.on, self.free = base, configs, on, free
        self._host: ComputeHostDescriptor | None = None

    @property
    def config(self) -> VmConfiguration:
        return self.configs[-1]

    def host(self) -> ComputeHostDescriptor:
        if self._host is None:
            self._host = built(self.base, self.configs)
        return self._host


class ClaimedHosts(Mapping[str, ComputeHostDescriptor]):
    """`PlacementResult.hosts` of a placement whose claims are pending: each host's claimed
    descriptor built when read (the same descriptor `claims.claim` gives)."""

    __slots__ = ("_claims",)

    def __init__(self, claims: Mapping[str, HostClaim | ComputeHostDescriptor]) -> None:
        self._claims = dict(claims)

    def __getitem__(self, host_id: str) -> ComputeHostDescriptor:
        made = self._claims[host_id]
        return made.host() if isinstance(made, HostClaim) else made

    def __iter__(self) -> Iterator[str]:
        return iter(self._claims)

    def __len__(self) -> int:
        return len(self._claims)

    def claim(self, host_id: str) -> HostClaim | None:
        """The pending claim on `host_id` (None: its descriptor was built)."""
        made = self._claims.get(host_id)
        return made if isinstance(made, HostClaim) else None

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __reduce__(self) -> tuple[type[dict[str, ComputeHostDescriptor]], tuple[Any, ...]]:
        # a pickled result holds the descriptors themselves (a plain dict)
        return dict, (dict(self.items()),)


def free_pending(
    base: ComputeHostDescriptor, free: HostFree, config: VmConfiguration
) -> HostFree | None:
    """The host's free resources once `config` is claimed on the host whose free resources are
    `free` (`base`: the descriptor the index holds, read for what no claim writes), each kind's
    from the configuration alone (`FreeClaimed` with no claimed host); None when a kind cannot
    tell, or the claim would conflict: the host is built and claimed on then."""
    parts: dict[str, object] = {}
    for kind in _FREE:
        delta = _CLAIMED.get(kind.name)
        part = free.parts[kind.name]
        new = None if delta is None else delta.free_claimed(base, part, config, None)
        if new is None:
            return None
        parts[kind.name] = new
    return HostFree(id=free.id, node_ids=free.node_ids, parts=parts)


class _Rows(Protocol):
    def __len__(self) -> int: ...
    def host_at(self, i: int) -> ComputeHostDescriptor: ...


class HostsView:
    """`FleetIndex.hosts`: each row's current descriptor (`FleetIndex.host_at`: a claim kept
    pending is built when its host is read)."""

    __slots__ = ("_rows",)

    def __init__(self, rows: _Rows) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i: int) -> ComputeHostDescriptor:
        n = len(self._rows)
        if not -n <= i < n:
            raise IndexError(f"host row {i} out of range")
        return self._rows.host_at(i % n)

    def __iter__(self) -> Iterator[ComputeHostDescriptor]:
        for i in range(len(self._rows)):
            yield self._rows.host_at(i)


def claimed_alone(
    vm: object, policy: Mapping[str, Any], configurations: tuple[VmConfiguration, ...]
) -> tuple[VmConfiguration, ...]:
    """What `FleetIndex.claimed` may work the new free resources out from, of a placement's
    `configurations`: one VM placed alone (`policy` as `place` took it) is claimed on the host
    as the index holds it; a VNF or a batch may move VMs, so its hosts are read (nothing)."""
    alone = isinstance(vm, VmDescriptor) and policy.get("count", 1) == 1
    return configurations if alone and policy.get("mode", "all") == "all" else ()
