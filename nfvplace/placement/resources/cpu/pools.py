"""A host's free PUs, classified the way the CPU kind counts them.

For every NUMA node: free cores with no thread used (`whole_cores`, with their free threads: a
howtogroup pair, an isolated vCPU with its siblings kept idle, or up to that many `prefer` vCPUs),
free single-thread cores (no SMT), and free threads whose siblings are busy (only for `prefer` and
the emulator PU): used by a VM, or host-reserved. A host-reserved sibling runs the host's
housekeeping, the noisy neighbour `isolate` and `require` exist to avoid (as in Nova, which needs
every thread of such a core in its dedicated set and free).
"""

from __future__ import annotations

from dataclasses import dataclass

from ....models.chd import ComputeHostDescriptor, Cpu, CpuState


@dataclass(frozen=True, slots=True)
class CpuNode:
    whole_cores: tuple[tuple[int, ...], ...]  # free threads of each core with no thread used
    single_cores: tuple[int, ...]  # PUs of free cores that have one thread
    half_busy: tuple[int, ...]  # free threads whose sibling is used by a VM or host-reserved
    eligible_threads: int

    @property
    def free_threads(self) -> int:
        return sum(len(c) for c in self.whole_cores) + len(self.single_cores) + len(self.half_busy)

    @property
    def core_sizes(self) -> tuple[int, ...]:
        """The distinct thread counts of the whole free cores (2 on SMT2 hosts), ascending."""
        return tuple(sorted({len(c) for c in self.whole_cores}))

    def whole_of_size(self, size: int) -> int:
        return sum(1 for c in self.whole_cores if len(c) == size)


@dataclass(frozen=True, slots=True)
class CpuFree:
    nodes: tuple[CpuNode, ...]  # by node slot
    smt: bool  # some core has more than one thread


def _classify(node_cpus: tuple[Cpu, ...], cpu_by_id: dict[int, Cpu]) -> CpuNode:
    whole: dict[tuple[int, ...], None] = {}
    single: list[int] = []
    half_busy: list[int] = []
    eligible = 0
    for cpu in node_cpus:
        if not cpu.eligible:
            continue
        eligible += 1
        if cpu.state is not CpuState.free:
            continue
        free = [cpu.id]
        has_other = any_busy = False
        for s in cpu.siblings:
            if s == cpu.id:
                continue
            has_other = True
            other = cpu_by_id.get(s)
            if other is not None and other.eligible and other.state is CpuState.free:
                free.append(s)
            else:
                any_busy = True  # used by a VM, or host-reserved
        if not has_other:
            single.append(cpu.id)
        elif any_busy:
            half_busy.append(cpu.id)
        else:
            whole[tuple(sorted(free))] = None
    return CpuNode(tuple(whole), tuple(single), tuple(half_busy), eligible)


def cpu_free(host: ComputeHostDescriptor) -> CpuFree:
    """Classify `host`'s free PUs per NUMA node (one pass over its PUs)."""
    cpus = host.cpus
    cpu_by_id: dict[int, Cpu] = {cpu.id: cpu for cpu in cpus}
    nodes = tuple(_classify(node.cpus, cpu_by_id) for node in host.numa_nodes)
    return CpuFree(nodes, any(len(cpu.siblings) > 1 for cpu in cpus))
