"""A brute-force reference placer, written from the rules in docs/placement.md (shares no engine code).

`fits(hosts, vm)` says whether some host can take the VM, by trying every choice: the node of every
cpu-set, which cores go whole to pairs and isolated vCPUs, every port for every interface, every set of
shared PUs. Only for small hosts (the differential fuzzer's); exponential on anything larger.

The rules, as this module reads them:
- a cpu-set sits on one NUMA node, distinct cpu-sets on distinct nodes unless the VM allows sharing;
- a howtogroup pair takes two free threads of a core on which no thread is used or host-reserved
  (not eligible); the core's other threads stay idle; an `isolate` vCPU takes one free thread of such a core and its other threads stay
  idle; a `prefer` vCPU and the emulator PU (`emulator_threads: isolate`, on the node of the first
  cpu-set) take any free thread of a core not kept idle that way; `require` pairs the unpaired vCPUs in
  order and needs a host with SMT: a whole core holds p of its pairs and o of its odd vCPUs (at most
  one), 2p + o <= its threads; with no odd vCPU its other threads stay idle, with one they stay free
  (for `prefer` vCPUs and the emulator PU); a plain VM is one cpu-set, `prefer` unless it sets
  `cpu_thread_policy`;
- hugepages of the asked size from the node's free pool (a size `large`/`any`: the largest pool
  size whose free pages hold the cpu-set's whole memory exactly, as if alone on the node; `any`
  falls back to normal memory); the rest of the memory from the node's free
  normal memory (its oversubscription ratio only when the VM allows oversubscription); memory bandwidth
  within the node's free bandwidth; `cpu_set_bandwidth` within the free bandwidth of a described link
  between two different nodes;
- `dedicated`: a whole eligible free port (no VF in use, nothing used) at least as fast as the speed and
  the bandwidth asked; `sriov`: a free VF (not paced below the bandwidth asked) of an eligible free or
  sriov port at least as fast as asked, the port's unused bandwidth shared by its VFs; a port serves
  either one dedicated interface or VFs; a NIC's interfaces within its PCIe budget; `physical_network`
  equal; an interface inside a cpu-set on that cpu-set's node;
- a plain VM with `cpu_oversubscription` floats over a set S of one node's shared PUs (state shared, or
  free with a ratio) with |S| >= vCPUs (never two of its vCPUs on one PU) and vCPUs / |S| <=
  (1 - usage) x ratio for each PU of S, its memory from that node; a floating cpu-set likewise over
  its own node's pool (one floating cpu-set per node), its memory and hugepages as a cpu-set's.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from nfvplace.models.chd import ComputeHostDescriptor, NumaNode
from nfvplace.models.vmd import CpuSet, Interface, VmDescriptor

PCIE_LANE_GBPS = {1: 2.0, 2: 4.0, 3: 7.877, 4: 15.754, 5: 31.508, 6: 63.015}


def _q(x: float | None) -> Fraction:
    return Fraction(x or 0.0).limit_denominator(1_000_000)


@dataclass
class _Set:
    id: int
    pairs: int
    isolate: int
    prefer: int
    hugepage_size: int | None
    hugepages: int
    normal_mib: int
    membw: Fraction
    needs_smt: bool
    floating: int = 0  # vCPUs floating over the node's shared pool
    choice: str | None = None  # a page size chosen on the node ("large" or "any")
    memory_mib: int = 0
    packed: bool = False  # `require`: pairs and the odd vCPU (`isolate` counts it) share cores


def _sets(vm: VmDescriptor) -> list[_Set]:
    out = []
    if vm.cpu_sets:
        sets = [(cs, cs.thread_policy or vm.cpu_thread_policy) for cs in vm.cpu_sets]
    else:
        policy = vm.cpu_thread_policy if "cpu_thread_policy" in vm.model_fields_set else "prefer"
        plain = CpuSet(id=0, vcpus=tuple(range(vm.vcpus or 1)), memory_mib=vm.memory_mib or 0)
        sets = [(plain, policy)]
    for cs, policy in sets:
        pairs = len(cs.howtogroup)
        singles = len(cs.vcpus) - 2 * pairs
        isolate = prefer = 0
        if str(policy) == "require":
            pairs += singles // 2
            isolate = singles % 2  # the odd vCPU, of a packed set
        elif str(policy) == "isolate":
            isolate = singles
        else:
            prefer = singles
        if cs.floating:
            pairs = isolate = prefer = 0
        hp = cs.hugepages
        huge_mib = hp.count * hp.size // 1024 if hp and hp.count else 0
        out.append(
            _Set(
                cs.id,
                pairs,
                isolate,
                prefer,
                hp.size if hp and hp.count else None,
                hp.pages if hp else 0,
                max(cs.memory_mib - huge_mib, 0),
                _q(cs.memory_bandwidth_gbps),
                not cs.floating and (bool(cs.howtogroup) or str(policy) == "require"),
                len(cs.vcpus) if cs.floating else 0,
                str(hp.size) if hp and hp.choice else None,
                cs.memory_mib,
                str(policy) == "require" and not cs.floating,
            )
        )
    return out


def _cores(node: NumaNode, host: ComputeHostDescriptor) -> list[tuple[int, bool]]:
    """(free threads, any thread used or host-reserved) of every core of `node` with a free
    thread."""
    by_id = {c.id: c for n in host.numa_nodes for c in n.cpus}
    seen: set[tuple[int, ...]] = set()
    out = []
    for cpu in node.cpus:
        key = tuple(sorted(set(cpu.siblings) | {cpu.id}))
        if key in seen:
            continue
        seen.add(key)
        threads = [by_id[t] for t in key if t in by_id]
        free = sum(1 for t in threads if t.eligible and t.state.value == "free")
        used = len(threads) < len(key) or any(
            not t.eligible or t.state.value != "free" for t in threads
        )
        if free:
            out.append((free, used))
    return out


def _roles(free: int, used: bool, packed: list[tuple[int, int]]) -> Iterator[tuple[Any, int]]:
    """What one core can hold (a role, and the threads it leaves for `prefer` and the emulator):
    nothing, a pair, an isolated vCPU, or p pairs and o odd vCPUs of one packed set."""
    yield None, free
    if used:
        return
    if free >= 2:
        yield "pair", 0
    yield "isolate", 0
    for s, (pairs, odd) in enumerate(packed):
        for p in range(pairs + 1):
            for o in range(odd + 1):
                if p + o and 2 * p + o <= free and free >= 2:
                    yield (s, p, o), free - 2 * p - o if o else 0


def _cpu_fits(
    cores: list[tuple[int, bool]],
    pairs: int,
    isolate: int,
    threads: int,
    packed: list[tuple[int, int]] | None = None,
) -> bool:
    """Some choice of roles for the cores holds the pairs, the isolated vCPUs and each packed
    set's pairs and odd vCPU, and leaves `threads` free threads."""
    need = {"pair": pairs, "isolate": isolate}
    left = [list(p) for p in packed or []]

    def search(k: int, spare: int) -> bool:
        if k == len(cores):
            done = not any(need.values()) and not any(any(p) for p in left)
            return done and spare >= threads
        for role, rest in _roles(*cores[k], [(p[0], p[1]) for p in left]):
            if role in need:
                if not need[role]:
                    continue
                need[role] -= 1
                found = search(k + 1, spare + rest)
                need[role] += 1
            elif role is not None:
                s, p, o = role
                left[s][0] -= p
                left[s][1] -= o
                found = search(k + 1, spare + rest)
                left[s][0] += p
                left[s][1] += o
            else:
                found = search(k + 1, spare + rest)
            if found:
                return True
        return False

    return search(0, 0)


def _node_fits(
    host: ComputeHostDescriptor, node: NumaNode, sets: list[_Set], emulator: int, over: bool
) -> bool:
    pairs = sum(s.pairs for s in sets if not s.packed)
    isolate = sum(s.isolate for s in sets if not s.packed)
    prefer = sum(s.prefer for s in sets) + emulator
    packed = [(s.pairs, s.isolate) for s in sets if s.packed and (s.pairs or s.isolate)]
    if (pairs or isolate or prefer or packed) and not _cpu_fits(
        _cores(node, host), pairs, isolate, prefer, packed
    ):
        return False
    floating = [s.floating for s in sets if s.floating]
    if len(floating) > 1 or (floating and not _pool_fits(_pool(node), floating[0])):
        return False
    mem = node.memory
    normal = mem.total_mib - sum(p.total * p.size_kib // 1024 for p in mem.hugepages)
    normal -= mem.normal.reserved_mib
    capacity = int(normal * mem.normal.oversubscription_ratio) if over else normal
    sets = [_resolved(s, mem, capacity - mem.normal.used_mib) for s in sets]
    if any(s is None for s in sets):
        return False
    for size in {s.hugepage_size for s in sets if s.hugepage_size}:
        pool = next((p for p in mem.hugepages if p.size_kib == size), None)
        if sum(s.hugepages for s in sets if s.hugepage_size == size) > (
            pool.total - pool.used if pool else 0
        ):
            return False
    if sum(s.normal_mib for s in sets) > capacity - mem.normal.used_mib:
        return False
    need_bw = sum(s.membw for s in sets)
    return not (
        need_bw
        and mem.bandwidth_gbps is not None
        and need_bw > _q(mem.bandwidth_gbps) - _q(mem.bandwidth_used_gbps)
    )


def _resolved(s: _Set, mem: object, normal_free: int) -> _Set:
    """A set whose page size is chosen on the node, with the size it gets there alone."""
    if s.choice is None:
        return s
    kib = s.memory_mib * 1024
    for pool in sorted(mem.hugepages, key=lambda p: -p.size_kib):  # type: ignore[attr-defined]
        if kib % pool.size_kib == 0 and pool.total - pool.used >= kib // pool.size_kib:
            return dataclasses.replace(
                s, hugepage_size=pool.size_kib, hugepages=kib // pool.size_kib, normal_mib=0
            )
    if s.choice == "any" and normal_free >= s.memory_mib:
        return dataclasses.replace(s, normal_mib=s.memory_mib)
    return None  # type: ignore[return-value]


def _ports(host: ComputeHostDescriptor) -> list[tuple[int, int, object]]:
    """(node id, NIC index, port) of every port."""
    return [
        (node.id, k, port)
        for node in host.numa_nodes
        for k, nic in enumerate(node.nics)
        for port in nic.ports
    ]


def _interfaces_fit(host: ComputeHostDescriptor, vm: VmDescriptor, node_of: dict[int, int]) -> bool:
    wanted = [(cs.id, i) for cs in vm.cpu_sets for i in cs.interfaces] + [
        (None, i) for i in vm.interfaces
    ]
    wanted = [(c, i) for c, i in wanted if i.mode.value != "vswitch"]
    if not wanted:
        return True
    ports = _ports(host)
    options = []
    for cs_id, iface in wanted:
        speed = _q(iface.speed_gbps)
        bw = _q(iface.bandwidth_gbps)
        if iface.mode.value == "dedicated":
            speed = max(speed, bw)
        choices = []
        for k, (node_id, _, port) in enumerate(ports):
            p = port  # type: ignore[assignment]
            if _q(p.speed_gbps) < speed:
                continue
            if iface.physical_network and p.physical_network != iface.physical_network:
                continue
            if cs_id is not None and iface.restricted_to_topology and node_id != node_of[cs_id]:
                continue
            choices.append(k)
        options.append(choices)
    return any(_ports_ok(host, ports, wanted, combo) for combo in itertools.product(*options))


def _ports_ok(
    host: ComputeHostDescriptor,
    ports: list[tuple[int, int, object]],
    wanted: list[tuple[int | None, Interface]],
    combo: tuple[int, ...],
) -> bool:
    nic_load: dict[tuple[int, int], Fraction] = {}
    for k, (node_id, nic_k, port) in enumerate(ports):
        p = port  # type: ignore[assignment]
        users = [wanted[j][1] for j, c in enumerate(combo) if c == k]
        if not users:
            continue
        dedicated = [u for u in users if u.mode.value == "dedicated"]
        sriov = [u for u in users if u.mode.value == "sriov"]
        if dedicated:
            if len(users) > 1 or not p.eligible or p.usage.value != "free":
                return False
            if any(vf.in_use for vf in p.vfs) or _q(p.bandwidth_used_gbps) > 0:
                return False
        if sriov:
            if not p.eligible or p.usage.value not in ("free", "sriov"):
                return False
            free = _q(p.speed_gbps) - _q(p.bandwidth_used_gbps)
            if sum(_q(u.bandwidth_gbps) for u in sriov) > free:
                return False
            rates = [vf.rate_gbps for vf in p.vfs if not vf.in_use]
            if not _vf_match(rates, [_q(u.bandwidth_gbps) for u in sriov]):
                return False
        key = (node_id, nic_k)
        nic_load[key] = nic_load.get(key, Fraction(0)) + sum(
            (_q(u.bandwidth_gbps) for u in users), Fraction(0)
        )
    for (node_id, nic_k), load in nic_load.items():
        nic = host.node(node_id).nics[nic_k]
        budget: Fraction | None = None
        if nic.pcie_bandwidth_gbps is not None:
            budget = _q(nic.pcie_bandwidth_gbps)
        elif nic.pcie_generation in PCIE_LANE_GBPS and nic.pcie_lanes:
            budget = _q(PCIE_LANE_GBPS[nic.pcie_generation] * nic.pcie_lanes)
        if budget is not None:
            used = sum((_q(p.bandwidth_used_gbps) for p in nic.ports), Fraction(0))
            if load > max(budget - used, 0):
                return False
    return True


def _vf_match(rates: list[float | None], needs: list[Fraction]) -> bool:
    """Every need gets its own VF paced at no less (or unpaced): brute force over VF choices."""
    for chosen in itertools.permutations(range(len(rates)), len(needs)):
        if all(rates[v] is None or _q(rates[v]) >= n for v, n in zip(chosen, needs, strict=True)):
            return True
    return False


def _links_fit(host: ComputeHostDescriptor, vm: VmDescriptor, node_of: dict[int, int]) -> bool:
    load: dict[tuple[int, int], Fraction] = {}
    for link in vm.cpu_set_bandwidth:
        a, b = (node_of[c] for c in link.cpu_sets)
        if a != b:
            key = (min(a, b), max(a, b))
            load[key] = load.get(key, Fraction(0)) + _q(link.bandwidth_mbps) / 1000
    for described in host.interconnect:
        key = (min(described.nodes), max(described.nodes))
        free = _q(described.bandwidth_gbps) - _q(described.bandwidth_used_gbps)
        if load.get(key, Fraction(0)) > max(free, 0):
            return False
    return True


def _layouts(
    host: ComputeHostDescriptor, vm: VmDescriptor, sets: list[_Set]
) -> Iterator[dict[int, int]]:
    ids = [n.id for n in host.numa_nodes]
    for combo in itertools.product(ids, repeat=len(sets)):
        if len(sets) > 1 and not vm.cpu_sets_may_share_node and len(set(combo)) < len(combo):
            continue
        yield {s.id: n for s, n in zip(sets, combo, strict=True)}


def _pinned_fits(host: ComputeHostDescriptor, vm: VmDescriptor) -> bool:
    if host.hypervisor is None:
        return False
    sets = _sets(vm)
    if any(s.needs_smt for s in sets) and not any(len(c.siblings) > 1 for c in host.cpus):
        return False
    emulator = vm.emulator_threads.value == "isolate"
    for node_of in _layouts(host, vm, sets):
        ok = True
        for node in host.numa_nodes:
            here = [s for s in sets if node_of[s.id] == node.id]
            emu = 1 if emulator and node_of[sets[0].id] == node.id else 0
            if (here or emu) and not _node_fits(host, node, here, emu, vm.memory_oversubscription):
                ok = False
                break
        if ok and _links_fit(host, vm, node_of) and _interfaces_fit(host, vm, node_of):
            return True
    return False


def _pool(node: NumaNode) -> list[Fraction]:
    """The room (vCPUs) of each PU of the node's shared pool."""
    return [
        (1 - _q(c.usage_ratio)) * (_q(c.oversubscription_ratio) or 1)
        for c in node.cpus
        if c.eligible
        and (c.state.value == "shared" or (c.state.value == "free" and c.oversubscription_ratio))
    ]


def _pool_fits(pool: list[Fraction], vcpus: int) -> bool:
    """Some set S of the pool, |S| >= vcpus, with vcpus / |S| within each PU's room."""
    for size in range(max(vcpus, 1), len(pool) + 1):
        for chosen in itertools.combinations(pool, size):
            if all(Fraction(vcpus, size) <= room for room in chosen):
                return True
    return False


def _shared_fits(host: ComputeHostDescriptor, vm: VmDescriptor) -> bool:
    vcpus = vm.vcpus or 1
    if not _interfaces_fit(host, vm, {}):
        return False
    for node in host.numa_nodes:
        mem = node.memory
        normal = mem.total_mib - sum(p.total * p.size_kib // 1024 for p in mem.hugepages)
        normal -= mem.normal.reserved_mib
        if vm.memory_oversubscription:
            normal = int(normal * mem.normal.oversubscription_ratio)
        if (vm.memory_mib or 0) > normal - mem.normal.used_mib:
            continue
        if _pool_fits(_pool(node), vcpus):
            return True
    return False


def host_fits(host: ComputeHostDescriptor, vm: VmDescriptor) -> bool:
    if not vm.cpu_sets and vm.cpu_oversubscription:
        return _shared_fits(host, vm)
    return _pinned_fits(host, vm)


def fits(hosts: list[ComputeHostDescriptor], vm: VmDescriptor) -> bool:
    return any(host_fits(h, vm) for h in hosts)
