"""Why a host cannot take a VM: one enum of every rejection reason placement gives.

`Rejection.reason` (and the `reason` of every rejection the CLI, the library and the REST API show) is
one of these codes. Each member carries what it means (`meaning`, for the docs) and the resource it
names in what-if capacity's `limited_by` (`resource`). The resource kinds (`placement/resources/`)
own the codes of their checks; the engine owns the stages after the filter. `docs/placement.md`
lists them all, checked against this enum by a test.
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    meaning: str
    resource: str

    def __new__(cls, code: str, meaning: str, resource: str = "") -> Reason:
        member = str.__new__(cls, code)
        member._value_ = code
        member.meaning = meaning
        member.resource = resource or code.replace("_", " ")
        return member

    # processor, memory type and hypervisor (resources/capabilities/)
    processor_vendor = ("processor_vendor", "the processor vendor is not the one the VM names")
    processor_architecture = ("processor_architecture", "the processor architecture differs")
    processor_flags = ("processor_flags", "the processor lacks CPU flags the VM requires")
    processor_model = (
        "processor_model",
        "the processor model is not compatible with the VM's reference model (processor_match)",
    )
    processor_frequency = ("processor_frequency", "the processor runs below the VM's minimum")
    memory_type = ("memory_type", "the host's memory is not of the type the VM requires")
    memory_speed = ("memory_speed", "the host's memory is slower than the VM's minimum")
    memory_channels = ("memory_channels", "the host has fewer memory channels than required")
    hypervisor = ("hypervisor", "the host descriptor has no hypervisor section")
    hypervisor_type = ("hypervisor_type", "the hypervisor is not of the type the VM requires")
    hypervisor_version = ("hypervisor_version", "the hypervisor is older than the VM's minimum")
    capability = ("capability", "a hypervisor capability the VM requires is missing")
    capability_disabled = (
        "capability_disabled",
        "a hypervisor capability the VM requires is present but not enabled",
    )
    # pinned CPUs (resources/cpu/)
    smt = ("smt", "the host has one thread per core; howtogroup pairs need two", "sibling pairs")
    core_pairs = (
        "core_pairs",
        "no NUMA node has enough whole free cores for the cpu-set's howtogroup pairs",
        "sibling pairs",
    )
    cores = (
        "cores",
        "no NUMA node has enough free cores for the cpu-set's isolated vCPUs",
        "cores",
    )
    threads = (
        "threads",
        "no NUMA node has enough free threads for the cpu-set's vCPUs (and the emulator PU)",
        "cores",
    )
    # floating vCPUs (resources/shared.py)
    shared_pus = (
        "shared_pus",
        "no NUMA node's shared pool has a PU with room for each floating vCPU (a VM never "
        "overcommits against itself)",
        "shared cores",
    )
    shared_cpu = (
        "shared_cpu",
        "no NUMA node's shared pool has room for the vCPUs spread evenly within each PU's ratio",
        "shared cores",
    )
    # memory (resources/memory.py)
    hugepages = ("hugepages", "no NUMA node has enough free hugepages of the size asked")
    memory = ("memory", "no NUMA node has enough free normal memory")
    memory_bandwidth = (
        "memory_bandwidth",
        "no NUMA node has enough free memory bandwidth for the cpu-set",
    )
    # ports, VFs and the vSwitch (resources/nics/)
    dedicated_port = (
        "dedicated_port",
        "not enough free whole ports of the speed asked (on the cpu-set's node)",
        "ports",
    )
    sriov_vf = (
        "sriov_vf",
        "not enough free VFs on ports of the speed asked (on the cpu-set's node)",
        "VFs",
    )
    sriov_bandwidth = (
        "sriov_bandwidth",
        "no port with a free VF has the bandwidth the interface asks unused",
        "bandwidth",
    )
    physical_network = (
        "physical_network",
        "not enough free ports or VFs cabled to the physical network the interface names",
    )
    vswitch = ("vswitch", "the host has no vSwitch for the vswitch interfaces", "vSwitch ports")
    vswitch_acceleration = ("vswitch_acceleration", "the vSwitch is not accelerated")
    vswitch_type = ("vswitch_type", "the vSwitch is not of a type the VM accepts")
    vswitch_bandwidth = (
        "vswitch_bandwidth",
        "the vSwitch lacks the bandwidth of the vswitch interfaces",
        "bandwidth",
    )
    # PCI devices (resources/devices.py)
    pci_device = ("pci_device", "not enough free PCI devices of the class asked", "PCI devices")
    # impact limits (resources/impact.py)
    max_instances = (
        "max_instances",
        "the host already runs as many instances of the VM as its impact limit allows",
        "instances per host (impact limit)",
    )
    memory_bandwidth_budget = (
        "memory_bandwidth_budget",
        "the host's memory bandwidth left after its running instances is below the VM's impact",
        "memory bandwidth",
    )
    # L3 cache ways (resources/cache_ways.py)
    cache_allocation = (
        "cache_allocation",
        "the host states no L3 cache allocation (Intel RDT CAT), or none the VM can use",
        "cache ways",
    )
    cache_classes = (
        "cache_classes",
        "every class of service (CLOSID) of the host's cache allocation is taken",
        "cache classes of service",
    )
    cache_ways = (
        "cache_ways",
        "no NUMA node's L3 cache has the free contiguous ways the cpu-set asks",
        "cache ways",
    )
    # the filter's NUMA layout (engine/filter.py)
    numa_nodes = (
        "numa_nodes",
        "fewer NUMA nodes can each take a cpu-set than the VM has cpu-sets (distinct nodes)",
        "NUMA nodes",
    )
    numa_combination = (
        "numa_combination",
        "every need of the cpu-set is met by some NUMA node, but no node meets them all",
    )
    # the exact model (engine/)
    infeasible = (
        "infeasible",
        "the needs fit one by one, but the exact model finds no layout of them all together",
        "cores",
    )
    timeout = ("timeout", "the exact model was not decided within the solver's time limit")
    internal = ("internal", "an internal invariant broke after the solve (a bug: please report)")
    claim = ("claim", "the configuration could not be claimed (a bug: please report)")
    not_tried = (
        "not_tried",
        "the host passed the filter but was not tried: max_candidates hosts were tried first, or a "
        "joint search did not get to it",
    )
    # joint placement (joint/)
    affinity = ("affinity", "a member of the same anti-affinity group is already there")
    link = ("link", "a link's locality or bandwidth rules the host out")


BY_CODE: dict[str, Reason] = {reason.value: reason for reason in Reason}


def resource_of(code: str) -> str:
    """The resource a rejection code names in what-if capacity's `limited_by`."""
    reason = BY_CODE.get(code)
    return reason.resource if reason is not None else code.replace("_", " ")


__all__ = ["BY_CODE", "Reason", "resource_of"]
