"""Drafts the kinds write into: a VM Configuration being assigned, a host being claimed on, and
the VM Descriptor a running VM is moved with.

`ConfigurationDraft` collects what each kind assigns after the solve (pins, pages, VFs, ...) and is
validated once into a `VmConfiguration`. `HostDraft` is a host as dicts of its fields, dumped only
where a claim touches it (a PU, a port, a node's memory) and validated once into a new
`ComputeHostDescriptor`; everything else is shared with the host it came from (models are
immutable). `DescriptorDraft` is a VM Descriptor asking for what a configuration holds, each kind
writing its part (`describe`). They are the kinds' only way to write: the engine, `claims` and
joint search's moves hand them round.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel

from ...errors import Issue
from ...models.chd import ComputeHostDescriptor, NumaNode
from ...models.configuration import VmConfiguration
from ...models.vmd import VmDescriptor


@dataclass
class ConfigurationDraft:
    """A VM Configuration being assigned: top-level fields, and each cpu-set's by cpu-set id."""

    fields: dict[str, Any]
    cpu_sets: dict[int, dict[str, Any]] = field(default_factory=dict)

    def build(self) -> VmConfiguration:
        data = dict(self.fields)
        data["cpu_sets"] = list(self.cpu_sets.values())
        return VmConfiguration.model_validate(data)


@dataclass
class DescriptorDraft:
    """A VM Descriptor being read back from a configuration: top-level fields, and each cpu-set's
    entry by cpu-set id (absent: the VM has no cpu-sets)."""

    fields: dict[str, Any]
    cpu_sets: dict[int, dict[str, Any]] = field(default_factory=dict)

    def build(self) -> VmDescriptor:
        data = dict(self.fields)
        if self.cpu_sets:
            data["cpu_sets"] = list(self.cpu_sets.values())
        return VmDescriptor.model_validate(data)


class AssignmentError(Exception):
    """The solved counts could not be turned into ids (the model guarantees they can: a bug)."""


def model_fields(model: BaseModel) -> dict[str, Any]:
    """A model's fields as a dict whose values are left as they are (sub-models stay models)."""
    fields = model.__dict__
    if len(fields) == _field_count(type(model)):  # the fields alone (no value cached beside)
        return dict(fields)
    return {name: getattr(model, name) for name in type(model).model_fields}


@cache
def _field_count(cls: type[BaseModel]) -> int:
    return len(cls.model_fields)  # `model_fields` is a property, a microsecond and a half a read


def touch(entries: list[Any], k: int, lazy: str | None = None) -> dict[str, Any]:
    """Entry k of `entries` as a mutable dict (dumped on first touch). With `lazy`, only that field's
    items stay models (a list), to be touched one by one; otherwise the entry is dumped in full."""
    entry = entries[k]
    if isinstance(entry, dict):
        return entry
    if lazy is None:
        dumped: dict[str, Any] = entry.model_dump(mode="python", by_alias=True)
    else:
        dumped = model_fields(entry)
        dumped[lazy] = list(dumped[lazy])
    entries[k] = dumped
    return dumped


class _Nodes(Mapping[int, dict[str, Any]]):
    """The host's NUMA nodes by id, each a mutable dict of its fields once looked up (its cpus,
    nics and PCI devices as lists whose entries stay models until touched). A node never looked
    up stays the model it was, and is not validated again."""

    def __init__(self, host: ComputeHostDescriptor) -> None:
        self._models = {node.id: node for node in host.numa_nodes}
        self.touched: dict[int, dict[str, Any]] = {}

    def __getitem__(self, node_id: int) -> dict[str, Any]:
        shallow = self.touched.get(node_id)
        if shallow is None:
            node = self._models[node_id]
            shallow = model_fields(node)
            shallow["cpus"] = list(node.cpus)
            shallow["nics"] = list(node.nics)
            shallow["pci_devices"] = list(node.pci_devices)
            self.touched[node_id] = shallow
        return shallow

    def __iter__(self) -> Iterator[int]:
        return iter(self._models)

    def __len__(self) -> int:
        return len(self._models)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._models

    def built(self, node: NumaNode) -> NumaNode:
        """The node as claimed: validated again only when something of it was touched."""
        shallow = self.touched.get(node.id)
        return node if shallow is None else NumaNode.model_validate(shallow)


class _Where[K, V]:
    """Where each item of the host is, mapped one node at a time and only as far as a lookup
    needs, the nodes in `near` first (a claim names a node or two of a host; the others are not
    read)."""

    def __init__(
        self,
        host: ComputeHostDescriptor,
        items: Callable[[NumaNode], Iterable[tuple[K, V]]],
        near: Collection[int],
    ):
        first = [node for node in host.numa_nodes if node.id in near]
        rest = [node for node in host.numa_nodes if node.id not in near]
        self._unread = list(reversed(first + rest))
        self._items = items
        self._where: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        found = self._where.get(key)
        while found is None and self._unread:
            self._where.update(self._items(self._unread.pop()))
            found = self._where.get(key)
        return found


def _ports(node: NumaNode) -> Iterator[tuple[str, tuple[int, int, int]]]:
    for k, nic in enumerate(node.nics):
        for j, port in enumerate(nic.ports):
            yield port.pci_address.lower(), (node.id, k, j)


def _vfs(node: NumaNode) -> Iterator[tuple[str, tuple[int, int, int, int]]]:
    for k, nic in enumerate(node.nics):
        for j, port in enumerate(nic.ports):
            for v, vf in enumerate(port.vfs):
                yield vf.pci_address.lower(), (node.id, k, j, v)


Places = dict[int, tuple[int, int]]  # PU id -> (node id, its position in the node's cpus)

KEEP_PLACES = 64
"""Nodes whose PU places are kept between claims: a claim keeps a node's PUs in their places, so
the places of the node it built are those of the node it was given; mapping a node of 192 PUs
again cost a third of a claim. A packing sequence comes back to the same few hosts."""

_places: dict[int, tuple[weakref.ref[NumaNode], Places]] = {}  # by id(node), oldest first
_places_lock = threading.Lock()


def kept_places(node: NumaNode) -> Places | None:
    """Where each PU of `node` is (`Places`), if a claim looked its PUs up lately."""
    with _places_lock:
        kept = _places.get(id(node))
    return kept[1] if kept is not None and kept[0]() is node else None


def places_of(node: NumaNode) -> Places:
    """Where each PU of `node` is: as a claim found them lately, else mapped (and kept)."""
    places = kept_places(node)
    if places is None:
        node_id = node.id
        places = {cpu.id: (node_id, k) for k, cpu in enumerate(node.cpus)}
        _keep_places(node, places)
    return places


def _keep_places(node: NumaNode, places: Places) -> None:
    with _places_lock:
        _places.pop(id(node), None)
        _places[id(node)] = (weakref.ref(node), places)
        while len(_places) > KEEP_PLACES:
            del _places[next(iter(_places))]


class _Cpus:
    """PU id -> its entry as a dict; entries (and their nodes) are dumped only when looked up."""

    def __init__(self, nodes: _Nodes, host: ComputeHostDescriptor, near: Collection[int]) -> None:
        self._nodes = nodes
        self._near = [node for node in host.numa_nodes if node.id in near]
        rest = [node for node in host.numa_nodes if node.id not in near]
        self._unread = list(reversed(self._near + rest))  # nodes whose PUs are not mapped yet
        self._where: Places = {}
        self.mapped: dict[int, Places] = {}  # node id -> the places of its PUs, where mapped
        self.touched: dict[int, list[int]] = {}  # node id -> positions of the PUs dumped

    def _guess(self, pu: int) -> tuple[int, int] | None:
        """Where `pu` is when a named node numbers its PUs in a run (most hosts do): found
        without mapping the node's PUs."""
        for node in self._near:
            cpus = node.cpus
            k = pu - cpus[0].id if cpus else -1
            if 0 <= k < len(cpus) and cpus[k].id == pu:
                return node.id, k
        return None

    def _find(self, pu: int) -> tuple[int, int] | None:
        found = self._where.get(pu)
        while found is None and self._unread:
            node = self._unread.pop()
            places = places_of(node)
            self.mapped[node.id] = places
            self._where.update(places)
            found = self._where.get(pu)
        return found

    def get(self, pu: int) -> dict[str, Any] | None:
        found = self._guess(pu) or self._find(pu)
        if found is None:
            return None
        node_id, k = found
        entries: list[Any] = self._nodes[node_id]["cpus"]
        cpu = entries[k]
        if not isinstance(cpu, dict):
            cpu = model_fields(cpu)
            entries[k] = cpu
            self.touched.setdefault(node_id, []).append(k)
        return cpu  # type: ignore[no-any-return]

    def keep_places(self, old: NumaNode, new: NumaNode) -> None:
        """Hand the places of `old`'s PUs on to `new`, the node claimed from it, where they are
        the same: as many PUs, and the ones dumped still with their ids."""
        places = self.mapped.get(old.id)
        if places is None or new is old or len(new.cpus) != len(old.cpus):
            return
        if all(new.cpus[k].id == old.cpus[k].id for k in self.touched.get(old.id, ())):
            _keep_places(new, places)


class _Nics:
    """Port and VF PCI address -> where it is; entries (and their nodes) are dumped only when
    looked up."""

    def __init__(self, nodes: _Nodes, host: ComputeHostDescriptor, near: Collection[int]) -> None:
        self._nodes = nodes
        self._ports = _Where(host, _ports, near)
        self._vfs = _Where(host, _vfs, near)

    def _port(self, node_id: int, k: int, j: int) -> dict[str, Any]:
        nic = touch(self._nodes[node_id]["nics"], k, lazy="ports")
        return touch(nic["ports"], j, lazy="vfs")

    def port(self, address: str) -> dict[str, Any] | None:
        found = self._ports.get(address)
        return None if found is None else self._port(*found)

    def vf(self, address: str) -> dict[str, Any] | None:
        found = self._vfs.get(address)
        if found is None:
            return None
        node_id, k, j, v = found
        return touch(self._port(node_id, k, j)["vfs"], v)


class HostDraft:
    """A host being claimed on (or released): the kinds look up what a configuration names and
    change it as dicts; `issues` collects what does not exist or is not free.

    Only what a claim touches is dumped and validated again (a PU, a port, a node's memory, the
    instances): a node it does not touch stays the very model it was (`free_of` keeps what it
    derived from it), and a claim costs what it changes, not the size of the host."""

    def __init__(self, host: ComputeHostDescriptor, near: Collection[int] = ()) -> None:
        self.host = host
        self.near = near  # the node ids a claim names: its PUs, ports and VFs are looked up first
        self.data = model_fields(host)  # top-level fields; `numa_nodes` is built from `nodes`
        self.nodes = _Nodes(host)
        self.issues: list[Issue] = []
        self._cpus: _Cpus | None = None
        self._nics: _Nics | None = None

    def fail(self, message: str, path: str) -> None:
        self.issues.append(Issue(message, path=path))

    def cpu(self, pu: int) -> dict[str, Any] | None:
        if self._cpus is None:
            self._cpus = _Cpus(self.nodes, self.host, self.near)
        return self._cpus.get(pu)

    @property
    def nics(self) -> _Nics:
        if self._nics is None:
            self._nics = _Nics(self.nodes, self.host, self.near)
        return self._nics

    def node_memory(self, node_id: int, path: str) -> dict[str, Any] | None:
        """A node's memory as a mutable dict (an issue when the node does not exist)."""
        if node_id not in self.nodes:
            self.fail(f"NUMA node {node_id} does not exist on {self.host.id}", path)
            return None
        node = self.nodes[node_id]
        memory = node["memory"]
        if not isinstance(memory, dict):
            memory = node["memory"] = memory.model_dump(mode="python", by_alias=True)
        return memory  # type: ignore[no-any-return]

    def section(self, name: str) -> dict[str, Any] | None:
        """A top-level section (`hypervisor`, ...) as a mutable dict of its fields."""
        value = self.data.get(name)
        if value is not None and not isinstance(value, dict):
            value = self.data[name] = model_fields(value)
        return value

    def entries(self, name: str) -> list[dict[str, Any]]:
        """A top-level list (`interconnect`, ...) as mutable dicts."""
        value = self.data.get(name, ())
        if not isinstance(value, list):
            value = self.data[name] = [
                e if isinstance(e, dict) else e.model_dump(mode="python", by_alias=True)
                for e in value
            ]
        return value

    def build(self) -> ComputeHostDescriptor:
        data = dict(self.data)
        data["numa_nodes"] = nodes = tuple(self.nodes.built(n) for n in self.host.numa_nodes)
        if self._cpus is not None:
            for old, new in zip(self.host.numa_nodes, nodes, strict=True):
                self._cpus.keep_places(old, new)
        return ComputeHostDescriptor.model_validate(data)
