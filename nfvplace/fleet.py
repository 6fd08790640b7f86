"""`nfvplace.Fleet`: the hosts being placed on, kept indexed between placements.

    fleet = nfvplace.Fleet("hosts/")          # a folder, a file, or CHD objects
    for vm in vms:
        result = fleet.place(vm)               # places AND claims: the next VM sees what this one took
    fleet.release(result)                      # gives the resources back
    hosts = fleet.hosts                        # every host's current descriptor

It wraps the engine's index (`nfvplace.placement.FleetIndex`), so a placement costs what the engine
costs (about a millisecond at 1,000 hosts), never a rebuild.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from . import errors
from .claims import release as release_claim
from .errors import DescriptorError, Issue
from .lint.gate import refuse, shape
from .models.chd import ComputeHostDescriptor
from .models.configuration import VmConfiguration
from .models.vmd import VmDescriptor
from .models.vnf import VnfTemplate
from .placement import PlacementResult, place
from .placement.index import FleetIndex, Hosts, claimed_alone, hosts_of, index_of
from .placement.resources.impact import IMPACT

HostsLike = str | Path | Hosts | Iterable[ComputeHostDescriptor]
PASSED = 64  # descriptors a fleet remembers lint passed (by identity)
SHAPES = 256  # shapes of VM Descriptors a fleet remembers lint passed (their JSON, 1-2 KiB each)


def _index(hosts: HostsLike, compact: bool) -> FleetIndex:
    """A private index of the hosts given as a path (read here), a mapping, an iterable or an
    index; anything that is not a host is refused with its position."""
    if isinstance(hosts, str | Path):
        from .reader import load

        loaded = load(hosts)
        items = hosts_of(loaded if isinstance(loaded, list) else [loaded], str(hosts))
        return index_of(items, private=True, compact=compact)
    if isinstance(hosts, FleetIndex):
        return index_of(hosts, private=True, compact=compact)
    return index_of(hosts_of(hosts), private=True, compact=compact)


def _keep[K, V](kept: dict[K, V], key: K, value: V, most: int) -> None:
    kept[key] = value
    if len(kept) > most:
        del kept[next(iter(kept))]


class Fleet:
    """The hosts being placed on: place and claim, release, and hand back every current descriptor.

    `Fleet(hosts)` takes a folder or file of CHDs (any format `nfvplace.load` reads), a list or a
    mapping of `ComputeHostDescriptor`, or a `FleetIndex`; `compact=True` keeps the descriptors
    compressed (see `FleetIndex`). The descriptors given are never changed: the fleet keeps new ones.
    """

    def __init__(self, hosts: HostsLike = (), *, compact: bool = False) -> None:
        self._index = _index(hosts, compact)
        self._passed: dict[int, VmDescriptor | VnfTemplate] = {}  # by id: what lint passed
        self._shapes: dict[str, None] = {}  # the shapes of VM Descriptors lint passed

    def _gate(self, vm: VmDescriptor | VnfTemplate) -> None:
        """Lint's refusal, as `nfvplace.place` gives it. A descriptor is frozen and lint reads
        nothing else, so the very object lint passed passes again: the last `PASSED` of them are
        kept (a loop placing one descriptor until the fleet is full lints it once); and a VM
        Descriptor of a shape lint passed (`lint.gate.shape`: all but its name) passes: the last
        `SHAPES` of them are kept (a stream of requests comes in a few shapes)."""
        if self._passed.get(id(vm)) is vm:
            return
        key = shape(vm)
        if key is None or key not in self._shapes:
            refuse(vm, "VM Descriptor or VNF template")
            if key is not None:
                _keep(self._shapes, key, None, SHAPES)
        _keep(self._passed, id(vm), vm, PASSED)

    # --- placing ------------------------------------------------------------------------------

    def place(self, vm: VmDescriptor | VnfTemplate, **policy: Any) -> PlacementResult:
        """Place `vm` (or every member of a VNF template) and claim what it was given.

        The keywords are those of `nfvplace.place` (`policy`, `seed`, `explain`, ...). The VM is
        linted first, as by `nfvplace.place` (`LintError` for what lint refuses). When nothing fits,
        the result carries the diagnosis and the fleet is unchanged.
        """
        self._gate(vm)
        result = place(self._index, vm, **policy)
        configurations = claimed_alone(vm, policy, result.configurations)
        self._index.take(result.hosts, configurations)  # a claim kept pending: nothing built
        return result

    def try_place(self, vm: VmDescriptor | VnfTemplate, **policy: Any) -> PlacementResult:
        """Where `vm` would go, without claiming anything (a dry run: the fleet is unchanged)."""
        self._gate(vm)
        return place(self._index, vm, **policy)

    def release(
        self, placed: PlacementResult | VmConfiguration | Iterable[VmConfiguration]
    ) -> dict[str, ComputeHostDescriptor]:
        """Give back what a placement claimed; returns the updated descriptors by host id.

        Idempotent: releasing twice, or releasing what this fleet never claimed, changes nothing.
        """
        if isinstance(placed, PlacementResult):
            configs: Iterable[VmConfiguration] = placed.configurations
        elif isinstance(placed, VmConfiguration):
            configs = (placed,)
        else:
            configs = placed
        updated: dict[str, ComputeHostDescriptor] = {}
        for config in configs:
            if config.host not in self._index.positions:
                raise DescriptorError(
                    errors.INPUT_INVALID,
                    f"{config.owner} was placed on {config.host}, which is not in this fleet",
                    issues=(Issue("release it on the fleet that placed it", path="host"),),
                )
            host = release_claim(self.host(config.host), config)
            self._index.claimed((host,))
            updated[host.id] = host
        return updated

    # --- the hosts ----------------------------------------------------------------------------

    @property
    def hosts(self) -> list[ComputeHostDescriptor]:
        """Every host's current descriptor (all of them, in the order given), claims included."""
        return list(self._index.hosts)

    @property
    def ids(self) -> list[str]:
        return self._index.ids

    @property
    def index(self) -> FleetIndex:
        """The engine's index behind this fleet (for `nfvplace.placement` functions)."""
        return self._index

    def host(self, host_id: str) -> ComputeHostDescriptor:
        """The current descriptor of one host; raises KeyError for an unknown id."""
        return self._index.host(host_id)

    def update(self, *hosts: ComputeHostDescriptor) -> None:
        """Add hosts, or replace hosts' descriptors (e.g. freshly discovered), by id."""
        self._index.update_many(hosts_of(hosts))

    def __len__(self) -> int:
        return len(self._index)

    def __iter__(self) -> Iterator[ComputeHostDescriptor]:
        return iter(self.hosts)

    def __contains__(self, host_id: object) -> bool:
        return host_id in self._index.positions

    def __repr__(self) -> str:
        instances = self._index.table(IMPACT).instances
        placed = sum(sum(per_host.values()) for per_host in instances.values())
        return f"Fleet({len(self)} hosts, {placed} VM instances)"


__all__ = ["Fleet", "HostsLike"]
