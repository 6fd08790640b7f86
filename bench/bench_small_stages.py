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
whole numbers, `resources/shared.py` `decide`).
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
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.units import stored_gbps
from nfvplace.models.vmd import VmDescriptor
from nfvplace.models.vnf import VnfTemplate
from nfvplace.placement import api as api_module
from nfvplace.placement.index import fleet as index_module
from nfvplace.placement.index import pending as pending_module
from nfvplace.placement.options import Options, Policy, parse_options
from nfvplace.placement.reasons import Reason
from nfvplace.placement.resources import memory_free
from nfvplace.placement.resources import nics as nics_module
from nfvplace.placement.resources import shared as shared_module
from nfvplace.placement.resources.kind import Decisions, Refusal
from nfvplace.placement.resources.nics import ports as ports_module
from nfvplace.placement.resources.nics.ports import FreePort, NicsFree, NodePorts
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


OLD: dict[str, list[tuple[object, str, object]]] = {
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
}
"""Each cut switched off: what is put back for the old fleet's blocks."""


@contextmanager
def switched_off(cuts: Sequence[str]) -> Iterator[None]:
    saved = [(t, a, getattr(t, a)) for name in cuts for t, a, _ in OLD[name]]
    try:
        for name in cuts:
            for target, attribute, old in OLD[name]:
                setattr(target, attribute, old)
        yield
    finally:
        for target, attribute, value in reversed(saved):
            setattr(target, attribute, value)


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


def _block(
    fleet: Fleet, vms: Sequence[VmDescriptor], off: Sequence[str], builds: Builds
) -> tuple[float, list[tuple[VmConfiguration, ...]]]:
    """CPU seconds of placing and claiming `vms` on `fleet` (the cuts `off` switched off)."""
    out = []
    with switched_off(off), builds:
        start = time.process_time()
        for vm in vms:
            out.append(fleet.place(vm).configurations)
        spent = time.process_time() - start
    return spent, out


def _same(old: list[tuple[VmConfiguration, ...]], new: list[tuple[VmConfiguration, ...]]) -> None:
    assert old == new, "a configuration differs"
    for a, b in zip(old, new, strict=True):
        assert [c.model_dump(mode="json") for c in a] == [c.model_dump(mode="json") for c in b]


def run(hosts: int, requests: int, block: int, cuts: Sequence[str]) -> dict[str, float]:
    given = make_fleet(hosts, seed=0)
    old_fleet, new_fleet = Fleet(given), Fleet(given)
    gc.collect()
    gc.freeze()
    vms = request_stream(requests + 40, seed=1)
    warm, timed = vms[:40], vms[40:]
    for vm in warm:  # both fleets alike, the new one's cuts on
        _same(_block(old_fleet, [vm], cuts, Builds())[1], _block(new_fleet, [vm], (), Builds())[1])
    old_builds, new_builds = Builds(), Builds()
    old_ms: list[float] = []
    new_ms: list[float] = []
    for k in range(0, len(timed), block):
        part = timed[k : k + block]
        order = ((old_fleet, cuts), (new_fleet, ())) if (k // block) % 2 == 0 else None
        if order is None:
            new_s, new_out = _block(new_fleet, part, (), new_builds)
            old_s, old_out = _block(old_fleet, part, cuts, old_builds)
        else:
            old_s, old_out = _block(old_fleet, part, cuts, old_builds)
            new_s, new_out = _block(new_fleet, part, (), new_builds)
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
    return {"old_ms": old_mean, "new_ms": new_mean}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--block", type=int, default=100)
    parser.add_argument("--only", choices=sorted(OLD), action="append")
    args = parser.parse_args(argv)
    run(args.hosts, args.requests, args.block, args.only or list(OLD))


if __name__ == "__main__":
    main()
