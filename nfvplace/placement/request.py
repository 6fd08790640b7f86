"""Normalising a VM Descriptor into what placement needs: demands per cpu-set, counted.

A `Request` is the descriptor reduced to numbers the filter and the solver compare with a host's free
counts: for each cpu-set the howtogroup pairs (each needs one whole free core), the unpaired vCPUs and the
thread policy that says what their siblings may become, hugepages, normal memory and interfaces. Plain
cloud VMs (no `cpu_sets`) become one synthetic cpu-set (pinned) or a shared demand (oversubscribed);
a floating cpu-set has no pinned vCPUs (the shared kind places them on its node's shared pool).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..exact import kbps
from ..models.vmd import (
    CpuSet,
    CpuSetBandwidth,
    EmulatorThreads,
    Interface,
    InterfaceMode,
    NumaAffinity,
    PageSizeChoice,
    ThreadPolicy,
    VmDescriptor,
)

MIB_PER_KIB = 1024


@dataclass(frozen=True, slots=True)
class InterfaceDemand:
    name: str
    mode: InterfaceMode
    speed_gbps: float  # port speed needed (a dedicated port: at least its bandwidth too)
    bandwidth_gbps: float
    cpu_set: int | None  # owning cpu-set (None: top-level interface)
    restricted: bool  # must sit on the cpu-set's node
    physical_network: str | None = None
    affinity: NumaAffinity | None = None  # near the VM's nodes otherwise (`resources/affinity`)
    # `bandwidth_gbps` in kbit/s, worked out once: the exact model reads it for every port
    bandwidth_kbps: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bandwidth_kbps", kbps(self.bandwidth_gbps))


@dataclass(frozen=True, slots=True)
class CpuSetDemand:
    id: int
    vcpus: tuple[int, ...]
    pairs: tuple[tuple[int, int], ...]
    singles: tuple[int, ...]
    policy: ThreadPolicy  # isolate or prefer (require is turned into pairs, `packed`)
    requires_smt: bool
    memory_mib: int
    hugepage_size_kib: int | None
    hugepage_count: int
    memory_bandwidth_kbps: int
    synthetic: bool = False
    floating: bool = False  # vCPUs float over the node's shared pool (the shared kind's)
    page_choice: PageSizeChoice | None = None  # the memory kind picks the page size per node
    # `require`: its pairs may share a core of 4 threads or more, its odd vCPU takes a thread of a
    # whole core (beside one of its pairs on a larger core) and leaves the others free, as Nova
    packed: bool = False

    @property
    def floating_vcpus(self) -> int:
        return len(self.vcpus) if self.floating else 0

    @property
    def hugepage_mib(self) -> int:
        if self.hugepage_size_kib is None:
            return 0
        return self.hugepage_count * self.hugepage_size_kib // MIB_PER_KIB

    @property
    def normal_mib(self) -> int:
        """Normal memory of a given page size (0 when the page size is chosen on the node)."""
        if self.page_choice is not None:
            return 0
        return max(self.memory_mib - self.hugepage_mib, 0)


@dataclass(frozen=True, slots=True)
class SharedDemand:
    """An oversubscribed plain VM: its vCPUs float over shared PUs of one node."""

    vcpus: int
    memory_mib: int

    @property
    def floating_vcpus(self) -> int:
        return self.vcpus

    @property
    def id(self) -> int:
        """The shared vCPUs' key among the request's parts (cpu-sets have ids from 0)."""
        return SHARED


SHARED = -1
Part = CpuSetDemand | SharedDemand
"""A part of a VM that sits on one NUMA node: a cpu-set, or its shared vCPUs (id `SHARED`)."""


@dataclass(frozen=True, slots=True)
class Request:
    vm: VmDescriptor  # with its variant applied
    variant: str | None
    cpu_sets: tuple[CpuSetDemand, ...]
    shared: SharedDemand | None
    interfaces: tuple[InterfaceDemand, ...]
    emulator: bool  # one extra dedicated PU on the node of the first cpu-set
    distinct_nodes: bool
    links: tuple[CpuSetBandwidth, ...]
    memory_oversubscription: bool

    @property
    def name(self) -> str:
        return self.vm.name

    @property
    def pinned(self) -> bool:
        return bool(self.cpu_sets)

    @property
    def parts(self) -> tuple[Part, ...]:
        """What sits on one NUMA node each: the cpu-sets, or the shared vCPUs."""
        return self.cpu_sets if self.shared is None else (*self.cpu_sets, self.shared)

    def cpu_set_of(self, cpu_set: int) -> CpuSet | None:
        """The descriptor's cpu-set with that id (None for a plain VM's synthetic one)."""
        return next((cs for cs in self.vm.cpu_sets if cs.id == cpu_set), None)

    def interfaces_of(self, cpu_set: int) -> tuple[InterfaceDemand, ...]:
        return tuple(i for i in self.interfaces if i.cpu_set == cpu_set and i.restricted)

    @property
    def vswitch_bandwidth_kbps(self) -> int:
        return sum(i.bandwidth_kbps for i in self.interfaces if i.mode is InterfaceMode.vswitch)

    @property
    def needs_vswitch(self) -> bool:
        return any(i.mode is InterfaceMode.vswitch for i in self.interfaces)


def _interface(iface: Interface, cpu_set: int | None) -> InterfaceDemand:
    speed = float(iface.speed_gbps or 0.0)
    if iface.mode is InterfaceMode.dedicated:
        # a whole port must carry the interface's bandwidth: no slower port than that
        speed = max(speed, float(iface.bandwidth_gbps or 0.0))
    return InterfaceDemand(
        name=iface.name,
        mode=iface.mode,
        speed_gbps=speed,
        bandwidth_gbps=float(iface.bandwidth_gbps or 0.0),
        cpu_set=cpu_set,
        restricted=cpu_set is not None
        and iface.restricted_to_topology
        and iface.numa_affinity in (None, NumaAffinity.required, NumaAffinity.legacy),
        physical_network=iface.physical_network,
        affinity=iface.numa_affinity,
    )


def _cpu_set(cs: CpuSet, vm_policy: ThreadPolicy, synthetic: bool = False) -> CpuSetDemand:
    policy = cs.thread_policy or vm_policy
    pairs = list(cs.howtogroup)
    singles = list(cs.single_vcpus)
    requires_smt = bool(pairs)
    if cs.floating:  # nothing pinned (lint refuses pairs and thread policies on floating sets)
        pairs, singles, policy, requires_smt = [], [], ThreadPolicy.prefer, False
    elif policy is ThreadPolicy.require:
        # vCPUs on sibling threads of their own: pair the unpaired ones in order (see `packed`)
        while len(singles) >= 2:
            pairs.append((singles.pop(0), singles.pop(0)))
        policy = ThreadPolicy.isolate
        requires_smt = True
    hp = cs.hugepages
    return CpuSetDemand(
        id=cs.id,
        vcpus=tuple(cs.vcpus),
        pairs=tuple(pairs),
        singles=tuple(singles),
        policy=policy,
        requires_smt=requires_smt,
        memory_mib=cs.memory_mib,
        hugepage_size_kib=hp.size_kib if hp and hp.count else None,
        hugepage_count=hp.pages if hp else 0,
        memory_bandwidth_kbps=kbps(cs.memory_bandwidth_gbps),
        synthetic=synthetic,
        floating=cs.floating,
        page_choice=hp.choice if hp else None,
        packed=(cs.thread_policy or vm_policy) is ThreadPolicy.require and not cs.floating,
    )


def build_request(vm: VmDescriptor, variant: str | None = None) -> Request:
    """The counted demands of `vm` (a descriptor whose variant, if any, is already applied)."""
    interfaces: list[InterfaceDemand] = []
    cpu_sets: list[CpuSetDemand] = []
    shared: SharedDemand | None = None
    for cs in vm.cpu_sets:
        cpu_sets.append(_cpu_set(cs, vm.cpu_thread_policy))
        interfaces.extend(_interface(i, cs.id) for i in cs.interfaces)
    if not vm.cpu_sets:
        vcpus = vm.vcpus or 1
        memory = vm.memory_mib or 0
        if vm.cpu_oversubscription:
            shared = SharedDemand(vcpus=vcpus, memory_mib=memory)
        else:
            # a plain pinned VM: one synthetic cpu-set on one node; unless the descriptor says
            # otherwise its vCPUs may share cores with each other and others (Nova's "prefer")
            policy = (
                vm.cpu_thread_policy
                if "cpu_thread_policy" in vm.model_fields_set
                else ThreadPolicy.prefer
            )
            synthetic = CpuSet(id=0, vcpus=tuple(range(vcpus)), memory_mib=memory)
            cpu_sets.append(_cpu_set(synthetic, policy, synthetic=True))
    interfaces.extend(_interface(i, None) for i in vm.interfaces)
    return Request(
        vm=vm,
        variant=variant,
        cpu_sets=tuple(cpu_sets),
        shared=shared,
        interfaces=tuple(interfaces),
        emulator=vm.emulator_threads is EmulatorThreads.isolate
        and any(not cs.floating for cs in cpu_sets),
        distinct_nodes=not vm.cpu_sets_may_share_node,
        links=tuple(vm.cpu_set_bandwidth),
        memory_oversubscription=vm.memory_oversubscription,
    )
