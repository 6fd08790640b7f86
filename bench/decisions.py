"""Decision snapshot: every decision the engine makes on a fixed corpus, written down to compare.

A refactor of the placement wing must change no decision. This writes, for a seeded corpus of small
random hosts and VMs (the shapes of the differential fuzzer), the bundled examples and a generated
fleet, every outcome a user can see through the library's doors: the configurations and the updated
hosts of `place` (or the diagnosis with every rejection), `evaluate`'s answers, `capacity`'s counts,
a sequence of `Fleet.place` calls until the fleet is full, and the relaxation's bound and plan. Run it
before and after a change and compare:

    python -m bench.decisions --write before.jsonl
    python -m bench.decisions --compare before.jsonl      # exit 1 and the first differences if any

Timed searches (joint placement's `mode="max"`, consolidation) are left out: their outcome depends on
the machine's speed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nfvplace
from nfvplace.errors import LintError, NfvplaceError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor

from .hostgen import make_fleet, request_stream

ROOT = Path(__file__).resolve().parents[1]
NETWORKS = [None, None, "a", "b"]
POLICIES = ("pack", "spread", "least-fragmentation")


def _chd(rng: random.Random, name: str, big: bool) -> ComputeHostDescriptor:
    threads = rng.choice([1, 2, 2, 2, 4])
    n_nodes = rng.randint(1, 2)
    most = (3 if threads == 4 else 4) * (2 if big else 1)
    cores = [rng.randint(most // 2 if big else 0, most) for _ in range(n_nodes)]
    total = sum(cores)
    nodes, core, bus = [], 0, 0x10
    for j in range(n_nodes):
        cpus = []
        for _ in range(cores[j]):
            siblings = [core + k * total for k in range(threads)]
            for t in siblings:
                cpu: dict[str, Any] = {"id": t, "core": core, "siblings": siblings}
                state = rng.choice(["free"] * (9 if big else 5) + ["used", "ineligible", "shared"])
                if state == "used":
                    cpu.update(state="dedicated", owner="other")
                elif state == "ineligible":
                    cpu["eligible"] = False
                elif state == "shared":
                    cpu.update(
                        state=rng.choice(["shared", "free"]),
                        oversubscription_ratio=rng.choice([1.0, 2.0, 6.0]),
                        usage_ratio=rng.choice([0.0, 0.5, 5 / 6]),
                    )
                cpus.append(cpu)
            core += 1
        nics = []
        for _ in range(rng.randint(0, 2)):
            ports = []
            for p in range(rng.randint(1, 2)):
                n_vfs = rng.randint(0, 3)
                used = rng.randint(0, n_vfs)
                ports.append(
                    {
                        "pci_address": f"0000:{bus:02x}:00.{p}",
                        "speed_gbps": rng.choice([10.0, 25.0]),
                        "usage": "sriov" if used else rng.choice(["free", "free", "dedicated"]),
                        "bandwidth_used_gbps": rng.choice([0.0, 0.0, 5.0, 9.9]) if used else 0.0,
                        "physical_network": rng.choice(NETWORKS),
                        "vfs": [
                            {
                                "pci_address": f"0000:{bus:02x}:{1 + p:02x}.{v}",
                                "in_use": v < used,
                                "rate_gbps": rng.choice([None, None, 1.0, 5.0]),
                            }
                            for v in range(n_vfs)
                        ],
                    }
                )
            nics.append(
                {
                    "vendor": "Intel",
                    "model": "E810",
                    "pcie_bandwidth_gbps": rng.choice([None, None, 8.0, 16.0]),
                    "ports": ports,
                }
            )
            bus += 1
        pages = rng.randint(0, 4)
        devices = [
            {"pci_address": f"0000:e{j}:00.{d}", "class": rng.choice(["gpu", "fpga"])}
            for d in range(rng.choice([0, 0, 1, 2]))
        ]
        nodes.append(
            {
                "id": j,
                "cpus": sorted(cpus, key=lambda c: c["id"]),
                "memory": {
                    "total_mib": pages * 1024 + rng.choice([2048, 4096, 8192]),
                    "hugepages": [
                        {"size_kib": 1048576, "total": pages, "used": rng.randint(0, pages)}
                    ],
                    "bandwidth_gbps": rng.choice([None, 0.3, 1.0]),
                    "bandwidth_used_gbps": rng.choice([0.0, 0.2]),
                },
                "nics": nics,
                "pci_devices": devices,
            }
        )
    data: dict[str, Any] = {
        "schema": "nfvplace/chd/v1",
        "id": name,
        "processor": {"vendor": "GenuineIntel", "model": "Intel(R) Xeon(R) Gold 6248"},
        "hypervisor": {
            "type": "kvm",
            "capabilities": ["cpu_pinning"],
            "vswitch": rng.choice(
                [None, {"type": "ovs_dpdk", "accelerated": True, "bandwidth_gbps": 10.0}]
            ),
        },
        "numa_nodes": nodes,
        "instances": [{"id": "r1", "vm": "fz"}] if rng.random() < 0.1 else [],
    }
    if n_nodes == 2 and rng.random() < 0.5:
        data["interconnect"] = [
            {"nodes": [0, 1], "bandwidth_gbps": 0.3, "bandwidth_used_gbps": 0.2}
        ]
        data["numa_distances"] = [[10, 21], [21, 10]]
    return ComputeHostDescriptor.model_validate(data)


def _interfaces(rng: random.Random, prefix: str, most: int) -> list[dict[str, Any]]:
    out = []
    for k in range(rng.randint(0, most)):
        iface: dict[str, Any] = {"name": f"{prefix}{k}", "mode": rng.choice(MODES)}
        speed = rng.choice([None, 10, 25])
        if speed:
            iface["speed_gbps"] = speed
        bw = rng.choice([None, 1, 2, 5, 12])
        if bw and speed:
            bw = min(bw, speed)
        if bw:
            iface["bandwidth_gbps"] = bw
        network = rng.choice(NETWORKS)
        if network and iface["mode"] != "vswitch":
            iface["physical_network"] = network
        out.append(iface)
    return out


MODES = ["sriov", "sriov", "dedicated", "vswitch"]


def _cpu_set(rng: random.Random, k: int, first: int) -> dict[str, Any]:
    n = rng.randint(1, 5)
    ids = list(range(first, first + n))
    cs: dict[str, Any] = {"id": k, "vcpus": ids, "memory_mib": rng.choice([512, 2048])}
    policy = rng.choice([None, "isolate", "prefer", "require"])
    if policy:
        cs["thread_policy"] = policy
    pairs = [[ids[i], ids[i + 1]] for i in range(0, n - 1, 2)]
    if policy == "require":
        cs["howtogroup"] = pairs
    elif rng.random() < 0.5:
        cs["howtogroup"] = pairs[: rng.randint(0, n // 2)]
    pages = rng.randint(0, 2)
    if pages:
        cs["hugepages"] = {"size": "1GiB", "count": pages}
        cs["memory_mib"] += pages * 1024
    if rng.randint(0, 3) == 0:
        cs["memory_bandwidth_gbps"] = rng.choice([0.1, 0.5])
    cs["interfaces"] = _interfaces(rng, f"c{k}e", 2)
    return cs


def _vmd(rng: random.Random) -> VmDescriptor:
    data: dict[str, Any] = {"schema": "nfvplace/vmd/v1", "name": "fz"}
    kind = rng.choice(["sets", "sets", "sets", "plain", "shared"])
    if kind != "sets":
        data.update(vcpus=rng.randint(1, 6), memory_mib=rng.choice([256, 2048]))
        data["cpu_oversubscription"] = kind == "shared"
        if kind == "plain" and rng.random() < 0.5:
            data["cpu_thread_policy"] = rng.choice(["isolate", "prefer", "require"])
        data["interfaces"] = _interfaces(rng, "t", 1)
        return VmDescriptor.model_validate(data)
    sets = []
    first = 0
    for k in range(rng.randint(1, 2)):
        sets.append(_cpu_set(rng, k, first))
        first += len(sets[-1]["vcpus"])
    data["cpu_sets"] = sets
    data["cpu_thread_policy"] = rng.choice(["isolate", "prefer"])
    data["emulator_threads"] = rng.choice(["share", "isolate"])
    data["cpu_sets_may_share_node"] = rng.random() < 0.5
    if len(sets) == 2 and rng.random() < 0.5:
        data["cpu_set_bandwidth"] = [{"cpu_sets": [0, 1], "bandwidth_mbps": 100}]
    if rng.random() < 0.5:
        data["interfaces"] = _interfaces(rng, "t", 1)
    if rng.random() < 0.15:
        data["pci_devices"] = [
            {"class": rng.choice(["gpu", "fpga"]), "count": 1, "cpu_set": rng.choice([None, 0])}
        ]
    if rng.random() < 0.1:
        data["impact"] = {"max_instances_per_host": 1}
    return VmDescriptor.model_validate(data)


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _result(result: Any) -> dict[str, Any]:
    if result.ok:
        return {
            "configurations": [_dump(c) for c in result.configurations],
            "hosts": {k: _dump(h) for k, h in sorted(result.hosts.items())},
            "explanation": list(result.explanation),
        }
    d = result.diagnosis
    return {
        "summary": d.summary,
        "rejections": [
            [r.host, r.reason, r.message, r.summary, r.requested, r.available, r.stage]
            for r in d.rejections
        ],
    }


def _guarded(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except LintError as exc:
        return {"refused": exc.code, "rules": sorted({f.rule for f in exc.findings})}
    except NfvplaceError as exc:
        return {"error": exc.code, "message": str(exc)}


def _place(hosts: list[ComputeHostDescriptor], vm: Any, policy: str, **options: Any) -> Any:
    return _result(nfvplace.place(hosts, vm, policy=policy, **options))


def _capacity(hosts: list[ComputeHostDescriptor], vm: VmDescriptor, policy: str) -> Any:
    return nfvplace.capacity(hosts, vm, policy=policy).to_dict()


def _evaluations(hosts: list[ComputeHostDescriptor], vm: VmDescriptor, policy: str) -> Any:
    return [
        [
            a.host,
            a.fits,
            a.score,
            [r.message for r in a.reasons],
            a.configuration and _dump(a.configuration),
        ]
        for a in nfvplace.evaluate(hosts, vm, policy=policy)
    ]


def random_cases(n: int, seed: int) -> Iterator[tuple[str, Any]]:
    rng = random.Random(seed)
    for k in range(n):
        hosts = [_chd(rng, f"h{j}", big=k % 2 == 1) for j in range(rng.randint(1, 3))]
        vm = _vmd(rng)
        policy = rng.choice(POLICIES)
        explain = rng.random() < 0.2
        yield (
            f"random/{k}/place",
            _guarded(_place, hosts, vm, policy, explain=explain),
        )
        if k % 3 == 0:
            yield f"random/{k}/evaluate", _guarded(_evaluations, hosts, vm, policy)
        if k % 5 == 0:
            yield (
                f"random/{k}/capacity",
                _guarded(_capacity, hosts, vm, policy),
            )


def _fill(hosts: list[ComputeHostDescriptor], vms: list[VmDescriptor], policy: str) -> Any:
    fleet = nfvplace.Fleet(hosts)
    out = []
    for vm in vms:
        result = _guarded(fleet.place, vm, policy=policy)
        if isinstance(result, dict):
            out.append(result)
            continue
        out.append(_result(result))
        if len(out) % 7 == 0 and result.ok:
            fleet.release(result)
    out.append({k.id: _dump(k) for k in fleet.hosts})
    return out


def example_cases() -> Iterator[tuple[str, Any]]:
    vms = {p.stem: nfvplace.load(p) for p in sorted((ROOT / "examples" / "vms").glob("*.yaml"))}
    for folder in ("fleet", "hosts"):
        hosts = nfvplace.load(ROOT / "examples" / folder)
        assert isinstance(hosts, list)
        for name, vm in vms.items():
            for policy in POLICIES:
                yield (
                    f"examples/{folder}/{name}/{policy}",
                    _guarded(_place, hosts, vm, policy, explain=True),
                )
            yield (
                f"examples/{folder}/{name}/capacity",
                _guarded(_capacity, hosts, vm, "pack"),
            )
        yield f"examples/{folder}/fill", _fill(hosts, list(vms.values()) * 6, "pack")
    ran = nfvplace.load(ROOT / "examples" / "vnf" / "ran-site.yaml")
    fleet = nfvplace.load(ROOT / "examples" / "fleet")
    yield (
        "examples/ran-site",
        _guarded(_place, fleet, ran, "pack", explain=True, search_limit_s=120),
    )


def generated_cases() -> Iterator[tuple[str, Any]]:
    from nfvplace.placement import FleetIndex
    from nfvplace.placement.joint.batch import of_batch
    from nfvplace.placement.joint.relaxation import relax
    from nfvplace.placement.options import Options

    hosts = make_fleet(200, seed=7)
    stream = request_stream(300, seed=3)
    for policy in POLICIES:
        yield f"generated/fill/{policy}", _fill(hosts, stream, policy)
    for vm in stream[:4]:
        yield f"generated/capacity/{vm.name}", nfvplace.capacity(hosts, vm).to_dict()
    small = make_fleet(30, seed=11)
    relaxation = relax(
        FleetIndex(small), of_batch(request_stream(60, seed=5)).members, Options(), 120
    )
    yield (
        "generated/relaxation",
        {
            "bound": relaxation.bound,
            "optimal": relaxation.optimal,
            "plan": {str(k): v for k, v in sorted(relaxation.plan.items())},
        },
    )


def snapshot(n: int, seed: int) -> Iterator[tuple[str, Any]]:
    yield from random_cases(n, seed)
    yield from example_cases()
    yield from generated_cases()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path, help="write the snapshot (JSON lines) here")
    group.add_argument("--compare", type=Path, help="compare with a snapshot written before")
    parser.add_argument("--cases", type=int, default=3000, help="random cases (default 3000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    lines = (
        json.dumps({"case": k, "outcome": v}, sort_keys=True)
        for k, v in snapshot(args.cases, args.seed)
    )
    if args.write:
        with args.write.open("w") as out:
            count = sum(1 for line in lines if out.write(line + "\n"))
        print(f"{count} decisions written to {args.write}")
        return 0
    before = args.compare.read_text().splitlines()
    differ = count = 0
    for old, new in zip(before, lines, strict=False):
        count += 1
        if old != new:
            differ += 1
            if differ <= 5:
                print(
                    f"differs: {json.loads(old)['case']}\n  before: {old[:600]}\n  after:  {new[:600]}"
                )
    print(f"{count} decisions compared, {differ} differ")
    return 1 if differ or count != len(before) else 0


if __name__ == "__main__":
    sys.exit(main())
