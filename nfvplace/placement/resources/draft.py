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

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ...errors import Issue
from ...models.chd import ComputeHostDescriptor
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
    return {name: getattr(model, name) for name in type(model).model_fields}


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


class _Cpus:
    """PU id -> its entry as a dict; entries are dumped only when looked up."""

    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        self._where: dict[int, tuple[list[Any], int]] = {}
        for node in nodes:
            entries: list[Any] = node.get("cpus", [])
            for k, cpu in enumerate(entries):
                pu = cpu["id"] if isinstance(cpu, dict) else cpu.id
                self._where[pu] = (entries, k)

    def get(self, pu: int) -> dict[str, Any] | None:
        found = self._where.get(pu)
        if found is None:
            return None
        entries, k = found
        cpu = entries[k]
        if not isinstance(cpu, dict):
            cpu = cpu.model_dump(mode="python")
            entries[k] = cpu
        return cpu  # type: ignore[no-any-return]


class _Nics:
    """Port and VF PCI address -> where it is; entries are dumped only when looked up."""

    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        self._ports: dict[str, tuple[dict[str, Any], int, int]] = {}
        self._vfs: dict[str, tuple[dict[str, Any], int, int, int]] = {}
        for node in nodes:
            for k, nic in enumerate(node["nics"]):
                for j, port in enumerate(nic.ports):
                    self._ports[port.pci_address.lower()] = (node, k, j)
                    for v, vf in enumerate(port.vfs):
                        self._vfs[vf.pci_address.lower()] = (node, k, j, v)

    @staticmethod
    def _port(node: dict[str, Any], k: int, j: int) -> dict[str, Any]:
        nic = touch(node["nics"], k, lazy="ports")
        return touch(nic["ports"], j, lazy="vfs")

    def port(self, address: str) -> dict[str, Any] | None:
        found = self._ports.get(address)
        return None if found is None else self._port(*found)

    def vf(self, address: str) -> dict[str, Any] | None:
        found = self._vfs.get(address)
        if found is None:
            return None
        node, k, j, v = found
        return touch(self._port(node, k, j)["vfs"], v)


class HostDraft:
    """A host being claimed on (or released): the kinds look up what a configuration names and
    change it as dicts; `issues` collects what does not exist or is not free."""

    def __init__(self, host: ComputeHostDescriptor) -> None:
        self.host = host
        self.data = model_fields(host)
        nodes: list[dict[str, Any]] = []
        for node in host.numa_nodes:
            shallow = model_fields(node)
            shallow["cpus"] = list(node.cpus)
            shallow["nics"] = list(node.nics)
            shallow["pci_devices"] = list(node.pci_devices)
            nodes.append(shallow)
        self.data["numa_nodes"] = nodes
        self.nodes = {node["id"]: node for node in nodes}
        self.issues: list[Issue] = []
        self._cpus: _Cpus | None = None
        self._nics: _Nics | None = None

    def fail(self, message: str, path: str) -> None:
        self.issues.append(Issue(message, path=path))

    def cpu(self, pu: int) -> dict[str, Any] | None:
        if self._cpus is None:
            self._cpus = _Cpus(self.data["numa_nodes"])
        return self._cpus.get(pu)

    @property
    def nics(self) -> _Nics:
        if self._nics is None:
            self._nics = _Nics(self.data["numa_nodes"])
        return self._nics

    def node_memory(self, node_id: int, path: str) -> dict[str, Any] | None:
        """A node's memory as a mutable dict (an issue when the node does not exist)."""
        node = self.nodes.get(node_id)
        if node is None:
            self.fail(f"NUMA node {node_id} does not exist on {self.host.id}", path)
            return None
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
        return ComputeHostDescriptor.model_validate(self.data)
