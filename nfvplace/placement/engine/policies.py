"""Placement policies as objectives.

Each policy orders the hosts that pass the filter (a vectorised score; ties broken by a hash of the host
id mixed with `seed`, so the same input and seed give the same answer) and sets the node-level costs of
the exact model. In every policy the model first minimises stranded threads (an idle sibling kept for
an isolated vCPU, a core left half used), weight `STRAND` per thread.

- `pack` (default): the fullest host that fits, counting the shares of free threads and free normal
  memory (fill used hosts, keep empty hosts empty), keeping hosts with free VFs or ports for VMs that
  need them and hosts with SMT for VMs with howtogroup pairs; on it the fullest node that fits (keep
  whole nodes free), avoiding nodes with usable ports when the cpu-set needs none;
- `spread`: the host with the largest share of free threads, and on it the emptiest node;
- `least-fragmentation`: the host and node where the VM fits most tightly (fewest free threads left on
  the chosen node), which keeps large holes for large VMs.
"""

from __future__ import annotations

import numpy as np

from ..index import FleetIndex
from ..options import Options, Policy
from ..request import CpuSetDemand, Request
from ..resources.base import HostFree, IntArray
from ..resources.cpu import CPU
from ..resources.memory import MEMORY
from ..resources.nics import NICS


def _mix(seed: int) -> np.uint64:
    x = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & 0xFFFFFFFF
    return np.uint64(x)


def host_keys(
    fleet: FleetIndex, request: Request, options: Options, node_ok: dict[int, np.ndarray]
) -> IntArray:
    """One int64 per host; the lower, the better (score in the high bits, tie-break in the low)."""
    cpu = fleet.table(CPU)
    if options.policy is Policy.pack:
        # fullest host first, counting threads and normal memory (shares of capacity, in 1/10000)
        memory = fleet.table(MEMORY)
        score = (cpu.free_threads * 10000 // cpu.total_threads) + (
            memory.normal_free * 10000 // memory.normal_capacity
        )
        if not any(i.mode.value != "vswitch" for i in request.interfaces):
            # keep hosts with free VFs and ports for the VMs that need them
            score = score + KEEP_VF * fleet.table(NICS).nic_free
        if not any(cs.pairs for cs in request.cpu_sets):
            # keep hosts with SMT (whole cores for pairs) for the VMs that need them
            score = score + KEEP_SMT * cpu.smt
    elif options.policy is Policy.spread:
        score = -(cpu.free_threads * 1_000_000 // cpu.total_threads)
    else:
        need = request.cpu_sets[0] if request.cpu_sets else None
        threads = cpu.whole * 2 + cpu.single + cpu.half_busy
        ok = node_ok.get(need.id if need else -1)
        vcpus = len(need.vcpus) if need else (request.shared.vcpus if request.shared else 0)
        leftover = np.where(ok if ok is not None else fleet.node_id >= 0, threads - vcpus, 1 << 20)
        score = leftover.min(axis=1).astype(np.int64) * 4096 + np.minimum(cpu.free_threads, 4095)
    tie = (fleet.tiebreak ^ _mix(options.seed)).astype(np.int64)
    keys: IntArray = score.astype(np.int64) * (1 << 32) + tie
    return keys


def score_terms(
    fleet: FleetIndex, i: int, request: Request, options: Options
) -> list[tuple[str, int, str]]:
    """Host i's policy score as (part, points, what it counts), in words; the parts add up to the
    score `host_keys` ranks by (lower is better)."""
    cpu, memory = fleet.table(CPU), fleet.table(MEMORY)
    free, total = int(cpu.free_threads[i]), int(cpu.total_threads[i])
    if options.policy is Policy.pack:
        mem_free, mem_total = int(memory.normal_free[i]), int(memory.normal_capacity[i])
        out = [
            (
                "free threads",
                free * 10000 // total,
                f"{free} of {total} eligible threads free, in 1/10000",
            ),
            (
                "free memory",
                mem_free * 10000 // mem_total,
                f"{mem_free} of {mem_total} MiB normal memory free, in 1/10000",
            ),
        ]
        if not any(x.mode.value != "vswitch" for x in request.interfaces):
            nic = int(fleet.table(NICS).nic_free[i])
            out.append(
                (
                    "ports kept",
                    KEEP_VF * nic,
                    f"{nic} free VFs and ports, {KEEP_VF} each: kept for VMs that need them",
                )
            )
        if not any(cs.pairs for cs in request.cpu_sets):
            smt = int(cpu.smt[i])
            out.append(
                (
                    "SMT kept",
                    KEEP_SMT * smt,
                    f"{KEEP_SMT} if the host has SMT: kept for VMs with howtogroup pairs",
                )
            )
        return out
    if options.policy is Policy.spread:
        return [
            (
                "free threads",
                -(free * 1_000_000 // total),
                f"minus {free} of {total} eligible threads free, in 1/1000000",
            )
        ]
    return []  # least-fragmentation: the score itself is the measure (POLICY_SCORES)


POLICY_SCORES = {
    "pack": "shares of free threads and free normal memory (in 1/10000 each), plus points for "
    "free VFs and ports and for SMT the VM does not need; lowest is the fullest host that fits",
    "spread": "minus the share of free threads (in 1/1000000); lowest is the emptiest host",
    "least-fragmentation": "free threads left on the tightest node after the first cpu-set x 4096, "
    "plus the host's free threads (at most 4095); lowest is the tightest fit",
}

KEEP_VF = 200  # pack: host score per free VF or port (in 1/10000 shares), for VMs that need none
KEEP_SMT = 2000  # pack: host score of SMT, for VMs with no howtogroup pair
PORT_KEEP = 100  # pack / least-fragmentation: keep nodes with usable ports for VMs that need them


NODE_COST = (
    "fit of the chosen NUMA nodes under the policy (pack: percent of free threads plus percent "
    "of free normal memory of each node, lower is fuller; spread: minus its free threads; "
    "least-fragmentation: free threads left beyond the cpu-set), plus 100 per usable port on a node "
    "whose cpu-set needs none"
)


def node_cost(
    free: HostFree, slot: int, cs: CpuSetDemand, options: Options, needs_ports: bool
) -> int:
    """The cost of putting `cs` on node slot `slot` of a host (`NODE_COST`)."""
    cpu = free.of(CPU).nodes[slot]
    threads_free = cpu.free_threads
    if options.policy is Policy.spread:
        return -threads_free
    ports = free.of(NICS).nodes[slot].ports
    keep = 0 if needs_ports else PORT_KEEP * sum(1 for p in ports if p.sriov_ok)
    if options.policy is Policy.pack:
        # fullest node first, in threads and in normal memory (each as a share, in percent)
        node = free.of(MEMORY)[slot]
        memory = 100 * node.normal_free_mib // max(node.normal_total_mib, 1)
        threads = 100 * threads_free // max(cpu.eligible_threads, 1)
        return threads + memory + keep
    return abs(threads_free - len(cs.vcpus)) + keep
