"""The fleet index: every host's free counts as numpy arrays (hosts x NUMA nodes).

Built once from the hosts' descriptors and kept up to date one host at a time (`update`), so that a
request is filtered over thousands of hosts with a handful of vectorised comparisons. The descriptors
themselves are kept as given (never mutated); the solver reads the few candidate hosts in full.
"""

from __future__ import annotations

import pickle
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from ..exact import kbps
from ..models.capabilities import HypervisorCapability
from ..models.chd import ComputeHostDescriptor, Port
from .hostview import HostView, host_view

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_M = TypeVar("_M")

UNLIMITED_KBPS = 2**62  # bandwidth of a node, port or host that states no figure
VIEW_CACHE = 64  # host views kept (the hosts a sequence of placements keeps coming back to)
CAPABILITIES: tuple[HypervisorCapability, ...] = tuple(HypervisorCapability)


def version_key(version: str | None) -> float:
    """`"8.2.0"` -> 8002000.0 (three numeric parts, 1000 each); unknown -> -1."""
    if not version:
        return -1.0
    parts: list[int] = []
    for piece in version.replace("-", ".").split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(min(int(digits), 999) if digits else 0)
    while len(parts) < 3:
        parts.append(0)
    return float(parts[0] * 1_000_000 + parts[1] * 1000 + parts[2])


@dataclass(frozen=True, slots=True)
class NetPort:
    """A port cabled to a named physical network (for the filter's per-network counts)."""

    slot: int  # node slot on its host
    network: str
    speed_gbps: float
    dedicable: bool
    free_vfs: int
    vf_kbps: int  # unused bandwidth a VF of it can get (port and NIC PCIe budget)


@dataclass
class _Vocab:
    """Column vocabularies of the arrays (page sizes, port speeds, flags, names)."""

    page_sizes: list[int]
    speeds: list[float]
    flags: dict[str, int]
    names: dict[str, int]  # vendor, model, hypervisor type, vswitch type, memory type -> code

    def code(self, name: str | None) -> int:
        if name is None:
            return -1
        return self.names.get(name.lower(), -2)


class Interner:
    """Shares equal sub-models between hosts (models are immutable, so equal parts can be one object).

    A fleet's hosts come from a handful of machine models: the PUs, ports and VFs of one host are, as
    values, those of many others. Keeping one object per distinct value instead of one per host
    halves the memory of a large fleet; the interned host is equal (`==`) to the one given.
    """

    def __init__(self) -> None:
        self._table: dict[object, object] = {}

    @staticmethod
    def _key(model: object) -> tuple[object, ...]:
        # the class and the field values, as a plain tuple: hashed and compared in C, where the
        # models' own __eq__ runs in Python (a 10,000-host fleet interns about 750,000 PUs)
        return (type(model), *model.__dict__.values())

    def _one(self, model: _M) -> _M:
        return self._table.setdefault(self._key(model), model)  # type: ignore[return-value]

    def _port(self, port: Port) -> Port:
        key = self._key(port)
        known = self._table.get(key)
        if known is not None:
            return known  # type: ignore[return-value]
        shared = port.model_copy(update={"vfs": tuple(self._one(vf) for vf in port.vfs)})
        self._table[key] = shared
        return shared

    def host(self, host: ComputeHostDescriptor) -> ComputeHostDescriptor:
        nodes = []
        for node in host.numa_nodes:
            nics = tuple(
                nic.model_copy(update={"ports": tuple(self._port(p) for p in nic.ports)})
                for nic in node.nics
            )
            cpus = tuple(self._one(cpu) for cpu in node.cpus)
            nodes.append(node.model_copy(update={"cpus": cpus, "nics": nics}))
        return host.model_copy(
            update={"numa_nodes": tuple(nodes), "processor": self._one(host.processor)}
        )


class HostStore:
    """The fleet's descriptors, as given, or (compact) pickled and compressed.

    A compact store keeps a few hundred recently used hosts as objects and the rest as compressed
    bytes (2-5 KiB a host instead of 50-400 KiB of model objects); a host is decompressed when the
    solver or a message needs it and compressed again only when it leaves the hot set changed.
    """

    def __init__(self, hosts: Iterable[ComputeHostDescriptor], compact: bool, hot: int = 512):
        self.compact = compact
        self.hot_size = hot
        self._hot: OrderedDict[int, tuple[ComputeHostDescriptor, bool]] = OrderedDict()
        self._items: list[ComputeHostDescriptor | bytes | None] = []
        for host in hosts:
            self._items.append(self._pack(host) if compact else host)

    @staticmethod
    def _pack(host: ComputeHostDescriptor) -> bytes:
        return zlib.compress(pickle.dumps(host, protocol=pickle.HIGHEST_PROTOCOL), 1)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: int) -> ComputeHostDescriptor:
        item = self._items[i]
        if isinstance(item, ComputeHostDescriptor):
            return item
        cached = self._hot.get(i)
        if cached is not None:
            self._hot.move_to_end(i)
            return cached[0]
        assert isinstance(item, bytes)
        host: ComputeHostDescriptor = pickle.loads(zlib.decompress(item))
        self._remember(i, host, dirty=False)
        return host

    def __setitem__(self, i: int, host: ComputeHostDescriptor) -> None:
        if not self.compact:
            self._items[i] = host
            return
        self._items[i] = None  # the hot copy is the truth until it is compressed again
        self._hot.pop(i, None)
        self._remember(i, host, dirty=True)

    def _remember(self, i: int, host: ComputeHostDescriptor, dirty: bool) -> None:
        self._hot[i] = (host, dirty)
        while len(self._hot) > self.hot_size:
            j, (old, changed) = self._hot.popitem(last=False)
            if changed:
                self._items[j] = self._pack(old)

    def append(self, host: ComputeHostDescriptor) -> None:
        self._items.append(self._pack(host) if self.compact else host)

    def __iter__(self) -> Iterator[ComputeHostDescriptor]:
        for i in range(len(self._items)):
            yield self[i]

    def copy(self) -> HostStore:
        clone = HostStore((), self.compact, self.hot_size)
        clone._items = list(self._items)
        clone._hot = OrderedDict(self._hot)
        return clone


class FleetIndex:
    """An indexed set of hosts. `place(fleet, vm)` reads it; `update(host)` refreshes one host.

    `compact=True` keeps the descriptors compressed (see `HostStore`): about a tenth of the memory,
    for a fraction of a millisecond per placement to decompress the chosen host.
    """

    def __init__(self, hosts: Iterable[ComputeHostDescriptor], *, compact: bool = False) -> None:
        interner = Interner()
        given = [interner.host(h) for h in hosts]
        self.host_ids: list[str] = [h.id for h in given]
        self.index: dict[str, int] = {}
        for i, host in enumerate(given):
            if host.id in self.index:
                from ..errors import DescriptorError

                raise DescriptorError(
                    "nfvplace.input.invalid",
                    f"host id {host.id!r} given twice",
                )
            self.index[host.id] = i
        self.hosts: HostStore | list[ComputeHostDescriptor] = given
        self._build()
        if compact:
            self.hosts = HostStore(given, compact=True)

    @classmethod
    def of(
        cls,
        hosts: FleetIndex | Sequence[ComputeHostDescriptor] | Mapping[str, ComputeHostDescriptor],
    ) -> FleetIndex:
        if isinstance(hosts, FleetIndex):
            return hosts
        if isinstance(hosts, Mapping):
            return cls(hosts.values())
        return cls(hosts)

    def __len__(self) -> int:
        return len(self.hosts)

    @property
    def ids(self) -> list[str]:
        return list(self.host_ids)

    def host(self, host_id: str) -> ComputeHostDescriptor:
        return self.hosts[self.index[host_id]]

    def view(self, i: int) -> HostView:
        """The classified free resources of host i (the last few are cached)."""
        host = self.hosts[i]
        cached = self._views.get(i)
        if cached is not None and cached[0] is host:
            return cached[1]
        return self._remember(i, host, host_view(host))

    def _remember(self, i: int, host: ComputeHostDescriptor, view: HostView) -> HostView:
        self._views.pop(i, None)
        self._views[i] = (host, view)
        while len(self._views) > VIEW_CACHE:
            self._views.pop(next(iter(self._views)))
        return view

    # --- building ---------------------------------------------------------------------------

    def _vocab(self) -> _Vocab:
        sizes: set[int] = set()
        speeds: set[float] = {0.0}
        flags: set[str] = set()
        names: set[str] = set()
        for host in self.hosts:
            for node in host.numa_nodes:
                sizes.update(p.size_kib for p in node.memory.hugepages)
                speeds.update(p.speed_gbps for p in node.ports)
            flags.update(f.lower() for f in host.processor.flags)
            names.add(host.processor.vendor.lower())
            names.add(host.processor.model.lower())
            if host.hypervisor is not None:
                names.add(str(host.hypervisor.type))
                if host.hypervisor.vswitch is not None:
                    names.add(str(host.hypervisor.vswitch.type))
            if host.memory is not None and host.memory.type:
                names.add(host.memory.type.lower())
        return _Vocab(
            page_sizes=sorted(sizes),
            speeds=sorted(speeds),
            flags={f: i for i, f in enumerate(sorted(flags))},
            names={n: i for i, n in enumerate(sorted(names))},
        )

    def _build(self) -> None:
        self.vocab = self._vocab()
        n = len(self.hosts)
        m = max((len(h.numa_nodes) for h in self.hosts), default=1)
        p = max(len(self.vocab.page_sizes), 1)
        s = len(self.vocab.speeds)
        f = max(len(self.vocab.flags), 1)
        c = len(CAPABILITIES)
        self.max_nodes = m
        # per host x node
        self.node_id: IntArray = np.full((n, m), -1, dtype=np.int64)
        self.whole: IntArray = np.zeros((n, m), dtype=np.int64)
        self.whole_threads: IntArray = np.zeros((n, m), dtype=np.int64)  # their free threads
        self.single: IntArray = np.zeros((n, m), dtype=np.int64)
        self.half_iso: IntArray = np.zeros((n, m), dtype=np.int64)
        self.half_busy: IntArray = np.zeros((n, m), dtype=np.int64)
        self.eligible: IntArray = np.zeros((n, m), dtype=np.int64)
        self.shared_spare: FloatArray = np.zeros((n, m), dtype=np.float64)
        self.hugepages: IntArray = np.zeros((n, m, p), dtype=np.int64)
        self.normal: IntArray = np.zeros((n, m), dtype=np.int64)
        self.normal_over: IntArray = np.zeros((n, m), dtype=np.int64)
        self.membw: IntArray = np.full((n, m), UNLIMITED_KBPS, dtype=np.int64)  # kbit/s
        self.ded_ports: IntArray = np.zeros((n, m, s), dtype=np.int64)
        self.vfs: IntArray = np.zeros((n, m, s), dtype=np.int64)
        self.vf_bw: IntArray = np.zeros((n, m, s), dtype=np.int64)  # kbit/s
        # per host
        self.smt: BoolArray = np.zeros(n, dtype=np.bool_)
        self.vendor: IntArray = np.full(n, -1, dtype=np.int64)
        self.model: IntArray = np.full(n, -1, dtype=np.int64)
        self.frequency: FloatArray = np.zeros(n, dtype=np.float64)
        self.flags: BoolArray = np.zeros((n, f), dtype=np.bool_)
        self.hv_type: IntArray = np.full(n, -1, dtype=np.int64)
        self.hv_version: FloatArray = np.full(n, -1.0, dtype=np.float64)
        self.caps: BoolArray = np.zeros((n, c), dtype=np.bool_)
        self.caps_disabled: BoolArray = np.zeros((n, c), dtype=np.bool_)
        self.vswitch_type: IntArray = np.full(n, -1, dtype=np.int64)
        self.vswitch_accel: BoolArray = np.zeros(n, dtype=np.bool_)
        self.vswitch_free: IntArray = np.zeros(n, dtype=np.int64)  # kbit/s
        self.mem_type: IntArray = np.full(n, -1, dtype=np.int64)
        self.mem_speed: FloatArray = np.full(n, -1.0, dtype=np.float64)
        self.mem_channels: FloatArray = np.full(n, -1.0, dtype=np.float64)
        self.host_membw: IntArray = np.full(n, UNLIMITED_KBPS, dtype=np.int64)  # kbit/s
        self.host_membw_used: IntArray = np.zeros(n, dtype=np.int64)
        self.free_threads: IntArray = np.zeros(n, dtype=np.int64)
        self.total_threads: IntArray = np.zeros(n, dtype=np.int64)
        self.normal_capacity: IntArray = np.ones(n, dtype=np.int64)
        self.normal_free: IntArray = np.zeros(n, dtype=np.int64)  # summed over nodes
        self.nic_free: IntArray = np.zeros(n, dtype=np.int64)  # free VFs + free whole ports
        self.tiebreak: npt.NDArray[np.uint64] = np.zeros(n, dtype=np.uint64)
        self.instances: dict[str, dict[int, int]] = {}
        self._vm_names: dict[int, set[str]] = {}
        # per host, only where there are any: ports cabled to a named network, free PCI devices
        self.net_ports: dict[int, tuple[NetPort, ...]] = {}
        self.devices: dict[int, tuple[tuple[int, str, str, str], ...]] = {}
        self._views: dict[int, tuple[ComputeHostDescriptor, HostView]] = {}
        for i, host in enumerate(self.hosts):
            self._fill(i, host)

    def _fits_vocab(self, host: ComputeHostDescriptor) -> bool:
        v = self.vocab
        if len(host.numa_nodes) > self.max_nodes:
            return False
        for node in host.numa_nodes:
            if any(p.size_kib not in v.page_sizes for p in node.memory.hugepages):
                return False
            if any(p.speed_gbps not in v.speeds for p in node.ports):
                return False
        names = [host.processor.vendor.lower(), host.processor.model.lower()]
        if host.hypervisor is not None:
            names.append(str(host.hypervisor.type))
            if host.hypervisor.vswitch is not None:
                names.append(str(host.hypervisor.vswitch.type))
        if host.memory is not None and host.memory.type:
            names.append(host.memory.type.lower())
        return all(x in v.names for x in names) and all(
            f.lower() in v.flags for f in host.processor.flags
        )

    def _fill(self, i: int, host: ComputeHostDescriptor) -> None:
        v = self.vocab
        view = self._remember(i, host, host_view(host))
        self.node_id[i, :] = -1
        for arr in (
            self.whole,
            self.whole_threads,
            self.single,
            self.half_iso,
            self.half_busy,
            self.eligible,
        ):
            arr[i, :] = 0
        for arr3 in (self.hugepages, self.ded_ports, self.vfs):
            arr3[i] = 0
        self.vf_bw[i] = 0
        self.shared_spare[i] = 0.0
        self.normal[i] = 0
        self.normal_over[i] = 0
        self.membw[i] = UNLIMITED_KBPS
        speeds = np.asarray(v.speeds)
        net_ports: list[NetPort] = []
        devices: list[tuple[int, str, str, str]] = []
        for j, node in enumerate(view.nodes):
            self.node_id[i, j] = node.id
            self.whole[i, j] = len(node.whole_cores)
            self.whole_threads[i, j] = sum(len(c) for c in node.whole_cores)
            self.single[i, j] = len(node.single_cores)
            self.half_iso[i, j] = len(node.half_isolated)
            self.half_busy[i, j] = len(node.half_busy)
            self.eligible[i, j] = node.eligible_threads
            self.shared_spare[i, j] = float(node.shared_spare_vcpus)
            for size, free in node.hugepages_free.items():
                self.hugepages[i, j, v.page_sizes.index(size)] = free
            self.normal[i, j] = node.normal_free_mib
            self.normal_over[i, j] = node.normal_free_over_mib
            if node.memory_bandwidth_free_kbps is not None:
                self.membw[i, j] = node.memory_bandwidth_free_kbps
            devices.extend(
                (j, d.device_class, (d.vendor or "").lower(), (d.model or "").lower())
                for d in node.devices
            )
            for port in node.ports:
                ge = speeds <= port.speed_gbps  # classes this port satisfies
                usable = min(
                    port.bandwidth_free_kbps,
                    node.nic_free_kbps.get(port.nic, port.bandwidth_free_kbps),
                )
                if port.physical_network is not None:
                    net_ports.append(
                        NetPort(
                            j,
                            port.physical_network,
                            port.speed_gbps,
                            port.dedicable,
                            len(port.free_vfs) if port.sriov_ok else 0,
                            usable,
                        )
                    )
                if port.dedicable:
                    self.ded_ports[i, j, ge] += 1
                if port.sriov_ok and port.free_vfs:
                    self.vfs[i, j, ge] += len(port.free_vfs)
                    self.vf_bw[i, j, ge] = np.maximum(self.vf_bw[i, j, ge], usable)
        self.net_ports.pop(i, None)
        self.devices.pop(i, None)
        if net_ports:
            self.net_ports[i] = tuple(net_ports)
        if devices:
            self.devices[i] = tuple(devices)
        self.smt[i] = view.smt
        self.free_threads[i] = sum(n.free_threads for n in view.nodes)
        self.total_threads[i] = max(sum(n.eligible_threads for n in view.nodes), 1)
        self.normal_free[i] = int(self.normal[i].sum())
        self.nic_free[i] = int(self.vfs[i, :, 0].sum() + self.ded_ports[i, :, 0].sum())
        self.normal_capacity[i] = max(
            sum(n.memory.normal_total_mib - n.memory.normal.reserved_mib for n in host.numa_nodes),
            1,
        )
        proc = host.processor
        self.vendor[i] = v.code(proc.vendor)
        self.model[i] = v.code(proc.model)
        self.frequency[i] = proc.frequency_mhz or 0.0
        self.flags[i] = False
        for flag in proc.flags:
            self.flags[i, v.flags[flag.lower()]] = True
        hv = host.hypervisor
        self.caps[i] = False
        self.caps_disabled[i] = False
        self.vswitch_type[i] = -1
        self.vswitch_accel[i] = False
        self.vswitch_free[i] = 0
        if hv is not None:
            self.hv_type[i] = v.code(str(hv.type))
            self.hv_version[i] = version_key(hv.version)
            for cap in hv.capabilities:
                self.caps[i, CAPABILITIES.index(cap)] = True
            for cap in hv.disabled_capabilities:
                self.caps_disabled[i, CAPABILITIES.index(cap)] = True
            if hv.vswitch is not None and str(hv.vswitch.type) != "none":
                self.vswitch_type[i] = v.code(str(hv.vswitch.type))
                self.vswitch_accel[i] = hv.vswitch.accelerated
                vs_free = view.vswitch_bandwidth_free_kbps
                self.vswitch_free[i] = UNLIMITED_KBPS if vs_free is None else vs_free
        else:
            self.hv_type[i] = -1
            self.hv_version[i] = -1.0
        mem = host.memory
        self.mem_type[i] = v.code(mem.type.lower() if mem and mem.type else None)
        self.mem_speed[i] = float(mem.speed_mts) if mem and mem.speed_mts is not None else -1.0
        self.mem_channels[i] = float(mem.channels) if mem and mem.channels is not None else -1.0
        bws = [n.memory.bandwidth_gbps for n in host.numa_nodes]
        self.host_membw[i] = (
            UNLIMITED_KBPS if any(b is None for b in bws) else sum(kbps(b) for b in bws)
        )
        self.host_membw_used[i] = sum(kbps(inst.memory_bandwidth_gbps) for inst in host.instances)
        for name in self._vm_names.pop(i, ()):
            self.instances[name].pop(i, None)
        for inst in host.instances:
            per = self.instances.setdefault(inst.vm, {})
            per[i] = per.get(i, 0) + 1
            self._vm_names.setdefault(i, set()).add(inst.vm)
        self.tiebreak[i] = np.uint64(zlib.crc32(host.id.encode()))

    # --- keeping it current -------------------------------------------------------------------

    def update(self, host: ComputeHostDescriptor) -> None:
        """Replace (or add) one host's descriptor, e.g. with `PlacementResult.hosts[...]`."""
        i = self.index.get(host.id)
        if i is None:
            self.index[host.id] = len(self.hosts)
            self.hosts.append(host)
            self.host_ids.append(host.id)
            self._build()
            return
        self.hosts[i] = host
        if self._fits_vocab(host):
            self._fill(i, host)
        else:
            self._build()

    def update_many(self, hosts: Iterable[ComputeHostDescriptor]) -> None:
        for host in hosts:
            self.update(host)

    def instance_counts(self, vm_name: str) -> IntArray:
        counts = np.zeros(len(self.hosts), dtype=np.int64)
        for i, k in self.instances.get(vm_name, {}).items():
            counts[i] = k
        return counts

    def speed_class(self, speed_gbps: float) -> int | None:
        """Column of the smallest port speed class >= `speed_gbps` (None: no port that fast)."""
        for k, s in enumerate(self.vocab.speeds):
            if s >= speed_gbps - 1e-9:
                return k
        return None

    def page_column(self, size_kib: int) -> int | None:
        try:
            return self.vocab.page_sizes.index(size_kib)
        except ValueError:
            return None

    def copy(self) -> FleetIndex:
        """An independent copy (arrays copied, descriptors shared: they are immutable)."""
        clone = FleetIndex.__new__(FleetIndex)
        for name, value in self.__dict__.items():
            if isinstance(value, np.ndarray):
                setattr(clone, name, value.copy())
            elif name == "instances":
                clone.instances = {k: dict(v) for k, v in self.instances.items()}
            elif name == "_views":
                clone._views = dict(self._views)
            elif name == "_vm_names":
                clone._vm_names = {k: set(v) for k, v in self._vm_names.items()}
            elif isinstance(value, HostStore | list | dict):
                setattr(clone, name, value.copy())
            else:
                setattr(clone, name, value)
        return clone
