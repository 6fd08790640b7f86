"""The engine's small stages at scale (issue 38, thirteenth round): two `Fleet`s of the same hosts
in ONE process, one with the cuts of this round switched off (the code as it was, put back for
its blocks), the other as it is, the same requests placed and claimed on each in alternating
blocks (which goes first alternates too). CPU time per placement of each, the configurations
checked equal (field by field and as dumped), and the hosts built by placements counted.

    .venv/bin/python -m bench.bench_small_stages                       # 10,000 hosts
    .venv/bin/python -m bench.bench_small_stages --hosts 2000 --requests 600
    .venv/bin/python -m bench.bench_small_stages --only pending_views  # one cut against none

The cuts: `pending_views` (a row with claims pending read again from the view its claims worked
out, `index/pending.py` `PendingViews`), `lint_shapes` (a VM Descriptor of a shape lint passed,
`Fleet._gate`), `options` (`parse_options()` with no keyword), `decisions_of` (`Decisions.of`
without a typing union built each call), `direct_builds` (the memory and VF parts after a claim
built without `dataclasses.replace`); second pass: `shared_decide` (the shared pool's arithmetic in
whole numbers, `resources/shared.py` `decide`), `fill_changed` (a claimed row's CPU, memory and
NICs columns written for the nodes the claim changed, `ColumnsChanged`) and `node_costs` (pack's
node shares kept with the host's view, `HostFree.memo`, and the NICs' kept ports counted without
a tuple built); fourteenth round: `port_entries` (a port's entry kept with the port's object,
`nics/ports.py` `_port`).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import statistics
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, cast

import nfvplace
from nfvplace.exact import kbps
from nfvplace.fleet import Fleet
from nfvplace.lint.gate import refuse
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.units import stored_gbps
from nfvplace.models.vmd import InterfaceMode, VmDescriptor
from nfvplace.models.vnf import VnfTemplate
from nfvplace.placement import api as api_module
from nfvplace.placement.engine import policies as policies_module
from nfvplace.placement.engine.policies import measures, pack
from nfvplace.placement.index import columns as columns_module
from nfvplace.placement.index import fleet as index_module
from nfvplace.placement.index import pending as pending_module
from nfvplace.placement.options import Options, Policy, parse_options
from nfvplace.placement.reasons import Reason
from nfvplace.placement.request import CpuSetDemand, Request
from nfvplace.placement.resources import memory_free
from nfvplace.placement.resources import nics as nics_module
from nfvplace.placement.resources import shared as shared_module
from nfvplace.placement.resources.base import HostFree, Vocabulary
from nfvplace.placement.resources.kind import Decisions, Refusal
from nfvplace.placement.resources.nics import ports as ports_module
from nfvplace.placement.resources.nics.ports import FreePort, NicsFree, NodePorts
from nfvplace.placement.resources.nics.table import NetPort, NicsTable
from nfvplace.placement.resources.scoring import PORT_KEEP
from nfvplace.placement.resources.shared import SharedChoice, SharedKind
from nfvplace.placement.resources.shared_pool import Pool, SharedPu

from .hostgen import make_fleet, request_stream


def _old_gate(self: Fleet, vm: VmDescriptor | VnfTemplate) -> None:
    passed = self._passed
    if passed.get(id(vm)) is vm:
        return
    refuse(vm, "VM Descriptor or VNF template")
    passed[id(vm)] = vm
    if len(passed) > nfvplace.fleet.PASSED:
        del passed[next(iter(passed))]


def _old_options(**kwargs: object) -> Options:
    return parse_options(**({"seed": 0} | kwargs))  # the whole validation, as every call ran it


def _old_of(self: Decisions, kind: Any) -> Any:
    return cast(Any | None, self._by_kind.get(kind.name))


def _old_with(
    part: memory_free.MemoryNode, *, pages: Any = None, normal: Any = None, over: Any = None
) -> memory_free.MemoryNode:
    changes = {"hugepages_free": pages, "normal_free_mib": normal, "normal_free_over_mib": over}
    return dataclasses.replace(part, **{k: v for k, v in changes.items() if v is not None})


def _old_vf_taken(node: NodePorts, k: int, port: FreePort, vf: int, gbps: float) -> NodePorts:
    used = stored_gbps(max(port.bandwidth_used_gbps + gbps, 0.0))
    taken = dataclasses.replace(
        port,
        free_vfs=port.free_vfs[:vf] + port.free_vfs[vf + 1 :],
        vf_rates_kbps=port.vf_rates_kbps[:vf] + port.vf_rates_kbps[vf + 1 :],
        bandwidth_used_gbps=used,
        bandwidth_free_kbps=max(kbps(port.speed_gbps) - kbps(used), 0),
        dedicable=False,
    )
    budgets = dict(node.nic_free_kbps)
    left = budgets.get(port.nic)
    if left:
        budgets[port.nic] = max(left - (kbps(used) - kbps(port.bandwidth_used_gbps)), 0)
    return NodePorts((*node.ports[:k], taken, *node.ports[k + 1 :]), budgets)


def _old_vfs_claimed(free: NicsFree, config: VmConfiguration) -> NicsFree | None:
    found = ports_module.vfs_claimed(free, config)
    # it ended with `replace(free, nodes=tuple(nodes))`: the same object, built again so
    return None if found is None else dataclasses.replace(found, nodes=found.nodes)


def _old_spare(pool: Sequence[SharedPu]) -> Fraction:
    return sum((p.spare_vcpus for p in pool), Fraction(0))


def _old_choose_pus(shared: Sequence[SharedPu], vcpus: int) -> Pool | None:
    pool = sorted(shared, key=lambda p: (-p.spare_vcpus, p.pu))
    for size in range(len(pool), max(vcpus, 1) - 1, -1):
        chosen = pool[:size]
        if Fraction(vcpus, size) <= chosen[-1].spare_vcpus:
            return tuple(sorted(chosen, key=lambda p: p.pu))
    return None


def _old_decide(
    self: SharedKind, free: Any, request: Any, allowed: Any, options: Options
) -> SharedChoice | Refusal | None:
    if request.shared is None:
        return None
    pools = free.of(self)
    ok = allowed.get(request.shared.id, frozenset())
    nodes = [(_old_spare(pools[j]), n, pools[j]) for j, n in enumerate(free.node_ids) if n in ok]
    spread = options.policy is Policy.spread
    for room, node, pool in sorted(nodes, key=lambda e: ((-e[0] if spread else e[0]), e[1])):
        pus = _old_choose_pus(pool, request.shared.vcpus)
        if pus is not None:
            return SharedChoice(node, pus, room)
    return Refusal(
        Reason.shared_cpu,
        "have no shared PUs on one node with room for the vCPUs spread evenly",
        "the shared pool has enough room in total, but no set of its PUs can take the "
        "vCPUs spread evenly within each PU's ratio",
    )


def _old_nics_fill(
    self: NicsTable, i: int, host: ComputeHostDescriptor, free: NicsFree, vocab: Vocabulary
) -> None:
    self.ded_ports[i] = 0
    self.vfs[i] = 0
    self.vf_bw[i] = 0
    speeds = vocab.values("speeds")
    net_ports: list[NetPort] = []
    for j, node in enumerate(free.nodes):
        ded, vfs, bandwidth = [0] * len(speeds), [0] * len(speeds), [0] * len(speeds)
        for port in node.ports:
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
            serves = [k for k, speed in enumerate(speeds) if speed <= port.speed_gbps]
            if port.dedicable:
                for k in serves:
                    ded[k] += 1
            if port.sriov_ok and port.free_vfs:
                for k in serves:
                    vfs[k] += len(port.free_vfs)
                    bandwidth[k] = max(bandwidth[k], usable)
        if node.ports:
            self.ded_ports[i, j], self.vfs[i, j], self.vf_bw[i, j] = ded, vfs, bandwidth
    self.net_ports.pop(i, None)
    if net_ports:
        self.net_ports[i] = tuple(net_ports)
    self.nic_free[i] = int(self.vfs[i, :, 0].sum() + self.ded_ports[i, :, 0].sum())
    self._vswitch(i, host, free, vocab)


def _old_node_cost(free: HostFree, slot: int, cs: CpuSetDemand, request: Request) -> int:
    nodes = measures.node_fullness(free, slot)
    shares = sum(measures.share(n.free, max(n.total, 1), pack.NODE_SCALE) for n in nodes)
    return int(shares) + measures.node_kept(free, slot, request, cs)


def _old_node_kept(self: Any, free: NicsFree, slot: int, request: Request, cs: CpuSetDemand) -> int:
    if any(i.mode is not InterfaceMode.vswitch for i in request.interfaces_of(cs.id)):
        return 0
    return PORT_KEEP * sum(1 for p in free.nodes[slot].ports if p.sriov_ok)


OLD: dict[str, list[tuple[object, Any, object]]] = {
    "pending_views": [(index_module, "PENDING_VIEWS", 0)],
    "lint_shapes": [(Fleet, "_gate", _old_gate)],
    "options": [(api_module, "parse_options", _old_options)],
    "decisions_of": [(Decisions, "of", _old_of)],
    "direct_builds": [
        (memory_free, "_with", _old_with),
        (ports_module, "_vf_taken", _old_vf_taken),
        (nics_module, "vfs_claimed", _old_vfs_claimed),
    ],
    "shared_decide": [
        (SharedKind, "decide", _old_decide),
        (shared_module, "choose_pus", _old_choose_pus),
        (shared_module, "spare", _old_spare),
    ],
    "fill_changed": [(columns_module, "_CHANGED", {}), (NicsTable, "fill", _old_nics_fill)],
    "node_costs": [
        (
            policies_module.POLICIES,
            Policy.pack,
            dataclasses.replace(pack.PACK, node_cost=_old_node_cost),
        ),
        (nics_module.NicsKind, "node_kept", _old_node_kept),
    ],
    "port_entries": [(ports_module, "_port", ports_module._port_made)],
}
"""Each cut switched off: what is put back for the old fleet's blocks (an attribute, or a
dictionary's entry)."""


def _get(target: object, key: Any) -> object:
    return target[key] if isinstance(target, dict) else getattr(target, key)


def _put(target: object, key: Any, value: object) -> None:
    if isinstance(target, dict):
        target[key] = value
    else:
        setattr(target, key, value)


@contextmanager
def switched_off(cuts: Sequence[str]) -> Iterator[None]:
    saved = [(t, a, _get(t, a)) for name in cuts for t, a, _ in OLD[name]]
    try:
        for name in cuts:
            for target, attribute, old in OLD[name]:
                _put(target, attribute, old)
        yield
    finally:
        for target, attribute, value in reversed(saved):
            _put(target, attribute, value)


class Builds:
    """Hosts built by a placement (`index/pending.py` `built`), counted while it runs."""

    def __init__(self) -> None:
        self.count = 0
        self._real = pending_module.built

    def __enter__(self) -> Builds:
        def counted(*args: Any) -> Any:
            self.count += 1
            return self._real(*args)

        pending_module.built = counted  # type: ignore[assignment]
        return self

    def __exit__(self, *_: object) -> None:
        pending_module.built = self._real


class Stages:
    """With `--stages`: CPU seconds in the index update (`FleetIndex.take`), in pack's node
    costs and in the views the index works out anew (`free_of`), summed while it runs (the cuts
    of its fleet in place)."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.take = self.node_costs = self.views = 0.0

    def __enter__(self) -> Stages:
        if not self.on:
            return self
        self._take, self._pack = index_module.FleetIndex.take, policies_module.POLICIES[Policy.pack]

        def take(*args: Any) -> Any:
            start = time.process_time()
            try:
                return self._take(*args)
            finally:
                self.take += time.process_time() - start

        def node_cost(*args: Any) -> int:
            start = time.process_time()
            try:
                return self._pack.node_cost(*args)
            finally:
                self.node_costs += time.process_time() - start

        def free_of(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return self._free_of(*args, **kwargs)
            finally:
                self.views += time.process_time() - start

        self._free_of = index_module.free_of
        index_module.free_of = free_of
        index_module.FleetIndex.take = take  # type: ignore[method-assign, assignment]
        policies_module.POLICIES[Policy.pack] = dataclasses.replace(self._pack, node_cost=node_cost)
        return self

    def __exit__(self, *_: object) -> None:
        if self.on:
            index_module.FleetIndex.take = self._take  # type: ignore[method-assign]
            index_module.free_of = self._free_of
            policies_module.POLICIES[Policy.pack] = self._pack


def _block(
    fleet: Fleet,
    vms: Sequence[VmDescriptor],
    off: Sequence[str],
    builds: Builds,
    stages: Stages | None = None,
) -> tuple[float, list[tuple[VmConfiguration, ...]]]:
    """CPU seconds of placing and claiming `vms` on `fleet` (the cuts `off` switched off)."""
    out = []
    with switched_off(off), builds, stages or Stages(False):
        start = time.process_time()
        for vm in vms:
            out.append(fleet.place(vm).configurations)
        spent = time.process_time() - start
    return spent, out


def _same(old: list[tuple[VmConfiguration, ...]], new: list[tuple[VmConfiguration, ...]]) -> None:
    assert old == new, "a configuration differs"
    for a, b in zip(old, new, strict=True):
        assert [c.model_dump(mode="json") for c in a] == [c.model_dump(mode="json") for c in b]


def run(
    hosts: int, requests: int, block: int, cuts: Sequence[str], stages: bool = False
) -> dict[str, float]:
    given = make_fleet(hosts, seed=0)
    old_fleet, new_fleet = Fleet(given), Fleet(given)
    gc.collect()
    gc.freeze()
    vms = request_stream(requests + 40, seed=1)
    warm, timed = vms[:40], vms[40:]
    for vm in warm:  # both fleets alike, the new one's cuts on
        _same(_block(old_fleet, [vm], cuts, Builds())[1], _block(new_fleet, [vm], (), Builds())[1])
    old_builds, new_builds = Builds(), Builds()
    old_stages, new_stages = Stages(stages), Stages(stages)
    old_ms: list[float] = []
    new_ms: list[float] = []
    for k in range(0, len(timed), block):
        part = timed[k : k + block]
        order = ((old_fleet, cuts), (new_fleet, ())) if (k // block) % 2 == 0 else None
        if order is None:
            new_s, new_out = _block(new_fleet, part, (), new_builds, new_stages)
            old_s, old_out = _block(old_fleet, part, cuts, old_builds, old_stages)
        else:
            old_s, old_out = _block(old_fleet, part, cuts, old_builds, old_stages)
            new_s, new_out = _block(new_fleet, part, (), new_builds, new_stages)
        _same(old_out, new_out)
        old_ms.append(old_s * 1000 / len(part))
        new_ms.append(new_s * 1000 / len(part))
    old_mean, new_mean = sum(old_ms) / len(old_ms), sum(new_ms) / len(new_ms)
    ratios = [n / o for n, o in zip(new_ms, old_ms, strict=True)]
    print(
        f"{hosts} hosts, {len(timed)} requests in {len(old_ms)} blocks of {block}; "
        f"cuts switched off in the old fleet: {', '.join(cuts)}"
    )
    print(
        f"  old: {old_mean:.3f} ms CPU a placement ({1000 / old_mean:.0f} /s), "
        f"{old_builds.count} hosts built"
    )
    print(
        f"  new: {new_mean:.3f} ms CPU a placement ({1000 / new_mean:.0f} /s), "
        f"{new_builds.count} hosts built"
    )
    print(
        f"  new / old: {new_mean / old_mean:.3f} (per block: median "
        f"{statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}); "
        f"every configuration equal; load average {os.getloadavg()[0]:.1f}"
    )
    if stages:
        labels = {"take": "index update (take)", "node_costs": "pack node costs"}
        for name in ("take", "node_costs", "views"):
            old_stage = getattr(old_stages, name) * 1000 / len(timed)
            new_stage = getattr(new_stages, name) * 1000 / len(timed)
            print(
                f"  {labels.get(name, 'views worked out anew (free_of)')}: "
                f"old {old_stage:.4f} ms, new {new_stage:.4f} ms a placement "
                f"(new / old {new_stage / old_stage:.3f})"
            )
    return {"old_ms": old_mean, "new_ms": new_mean}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--block", type=int, default=100)
    parser.add_argument("--only", choices=sorted(OLD), action="append")
    parser.add_argument("--stages", action="store_true", help="time the index update, node costs")
    args = parser.parse_args(argv)
    run(args.hosts, args.requests, args.block, args.only or list(OLD), args.stages)


if __name__ == "__main__":
    main()
