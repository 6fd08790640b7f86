"""The fleet index (`FleetIndex`) and the one way the doors turn hosts into one (`index_of`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ... import errors
from ...errors import DescriptorError, Issue
from ...models.chd import ComputeHostDescriptor
from .cache import index_for
from .fleet import FleetIndex
from .free import free_of
from .pending import claimed_alone

Hosts = FleetIndex | Sequence[ComputeHostDescriptor] | Mapping[str, ComputeHostDescriptor]


def index_of(
    hosts: Hosts,
    *,
    private: bool = False,
    compact: bool = False,
    share: bool = True,
    lazy: bool = False,
    source: str | None = None,
) -> FleetIndex:
    """The index of `hosts`: an index as given; a sequence or mapping of Compute Host Descriptors
    indexed (kept while the same host objects live, so that placing again on them costs no rebuild;
    `private=True` builds one the caller may change, `compact` keeps its descriptors compressed,
    `share=False` leaves their equal parts unshared, `lazy` fills each kind's columns when first
    read: see `FleetIndex`). Anything else is refused with the position of the first item that is
    not a host (`source`: the file or folder it came from)."""
    if isinstance(hosts, FleetIndex):
        return FleetIndex(list(hosts.hosts), compact=compact) if private else hosts
    items = hosts_of(hosts, source)
    if private:
        return FleetIndex(items, compact=compact, share=share, lazy=lazy)
    return index_for(items, share, lazy)


def hosts_of(
    hosts: Mapping[str, object] | Iterable[object], source: str | None = None
) -> list[ComputeHostDescriptor]:
    """The Compute Host Descriptors given; refuses anything else with its position."""
    items = list(hosts.values()) if isinstance(hosts, Mapping) else list(hosts)
    for k, item in enumerate(items):
        if not isinstance(item, ComputeHostDescriptor):
            raise DescriptorError(
                errors.INPUT_INVALID,
                f"hosts[{k}] is a {type(item).__name__}, not a Compute Host Descriptor",
                file=source,
                issues=(
                    Issue("give ComputeHostDescriptor objects (nfvplace.load)", path=f"hosts[{k}]"),
                ),
            )
    return items  # type: ignore[return-value]


__all__ = ["FleetIndex", "Hosts", "claimed_alone", "free_of", "hosts_of", "index_of"]
