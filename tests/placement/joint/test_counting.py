"""The counting model gives, host by host, the count of the engine placing instance after instance."""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement.engine.filter import run_filter
from nfvplace.placement.index import FleetIndex
from nfvplace.placement.joint.capacity import count_on_host
from nfvplace.placement.joint.counting import count_host, covers
from nfvplace.placement.options import Options
from nfvplace.placement.request import build_request

EXAMPLES = int(os.environ.get("NFVPLACE_COUNTING_EXAMPLES", "150"))


def _port(rng: random.Random) -> PortSpec:
    vfs = rng.choice((0, 1, 2, 4))
    return PortSpec(
        speed=rng.choice((10, 25)),
        vfs=vfs,
        vfs_used=rng.choice((0, min(1, vfs))),
        usage=rng.choice(("free", "free", "sriov")),
        bandwidth_used=rng.choice((0.0, 0.0, 5.0)),
        eligible=rng.random() < 0.9,
    )


def random_host(rng: random.Random, name: str) -> ComputeHostDescriptor:
    smt = rng.random() < 0.8
    nodes = [
        NodeSpec(
            cores=rng.choice((1, 2, 3, 4, 6)),
            hugepages_1g=rng.choice((0, 2, 4, 8)),
            memory_mib=rng.choice((16384, 32768)),
            ports=[_port(rng) for _ in range(rng.choice((0, 1, 1, 2)))],
        )
        for _ in range(rng.choice((1, 2)))
    ]
    threads = sum(n.cores for n in nodes) * (2 if smt else 1)
    picked = rng.sample(range(threads), rng.randint(0, threads // 2))
    cut, pooled = len(picked) // 3, len(picked) // 2
    ineligible = tuple(picked[:cut])
    used = dict.fromkeys(picked[cut:pooled], "other")
    shared = {
        pu: (rng.choice((1.0, 2.0, 4.0, 16.0)), rng.choice((0.0, 0.25, 0.5)))
        for pu in picked[pooled:]
    }
    return host(name, nodes=nodes, smt=smt, ineligible=ineligible, used=used, shared=shared)


def _interface(rng: random.Random, k: int) -> dict[str, Any]:
    mode = rng.choice(("sriov", "sriov", "dedicated"))
    out: dict[str, Any] = {"name": f"e{k}", "mode": mode, "speed_gbps": rng.choice((10, 25))}
    if mode == "sriov":
        out["bandwidth_gbps"] = rng.choice((1, 5, 10))
    return out


def random_vm(rng: random.Random) -> VmDescriptor:
    if rng.random() < 0.25:
        over = rng.random() < 0.6
        return vm("w", vcpus=rng.choice((1, 2, 3)), memory_mib=2048, cpu_oversubscription=over)
    interfaces = tuple(_interface(rng, k) for k in range(rng.choice((0, 0, 1, 2))))
    extra: dict[str, Any] = {}
    if rng.random() < 0.3:
        extra["emulator_threads"] = "isolate"
    if rng.random() < 0.2:
        extra["impact"] = {"max_instances_per_host": rng.choice((1, 2))}
    return vm(
        "w",
        [
            cpu_set(
                0,
                rng.choice((1, 2, 3, 4)),
                pairs=rng.random() < 0.5,
                hugepages_1g=rng.choice((0, 1, 2)),
                memory_mib=rng.choice((2048, 4096)),
                interfaces=interfaces,
                thread_policy=rng.choice((None, "prefer", "isolate", "require")),
            )
        ],
        **extra,
    )


def check(seed: int) -> None:
    rng = random.Random(seed)
    hosts = [random_host(rng, f"h{k}") for k in range(3)]
    v = random_vm(rng)
    fleet = FleetIndex(hosts)
    request = build_request(v)
    assert covers(request)
    passing = run_filter(fleet, request, Options(), fleet.node_id[:, 0] >= 0).passing
    for i, h in enumerate(hosts):
        counted = count_host(fleet, i, request)
        if counted is None:
            continue
        model = counted[0] if passing[i] else 0
        engine, limit = count_on_host(h, v, Options())
        assert model == engine, (seed, h.id, model, engine, limit, counted[1])


@settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
@given(st.integers(0, 2**32 - 1))
def test_counting_model_matches_the_engine(seed: int) -> None:
    check(seed)


@pytest.mark.parametrize(
    ("policy", "vcpus", "pairs", "emulator", "expected"),
    [
        ("prefer", 3, False, False, 2),  # 8 threads: 3 + 3, two left
        ("prefer", 3, False, True, 2),  # 4 threads each
        ("isolate", 1, False, True, 2),  # a core for the vCPU, a thread for the emulator
        ("isolate", 2, False, False, 2),
        ("prefer", 4, True, False, 2),
    ],
)
def test_counts_on_a_free_four_core_node(
    policy: str, vcpus: int, pairs: bool, emulator: bool, expected: int
) -> None:
    h = host("h", nodes=[NodeSpec(cores=4)])
    extra = {"emulator_threads": "isolate"} if emulator else {}
    v = vm("w", [cpu_set(0, vcpus, pairs=pairs, thread_policy=policy)], **extra)
    counted = count_host(FleetIndex([h]), 0, build_request(v))
    assert counted is not None
    assert counted[0] == expected == count_on_host(h, v, Options())[0]


def test_requests_it_does_not_cover() -> None:
    two_sets = vm("w", [cpu_set(0, 2), cpu_set(1, 2, first_vcpu=2)])
    assert not covers(build_request(two_sets))
    devices = vm("w", [cpu_set(0, 2)], pci_devices=[{"class": "crypto", "cpu_set": 0}])
    assert not covers(build_request(devices))


def test_shared_pool_counts_spread_vcpus() -> None:
    # 4 PUs of ratio 2 (8 vCPUs of room), half of one already used: 3-vCPU VMs spread evenly
    h = host(
        "h",
        nodes=[NodeSpec(cores=2)],
        smt=True,
        shared={0: (2.0, 0.5), 1: (2.0, 0), 2: (2.0, 0), 3: (2.0, 0)},
    )
    v = vm("w", vcpus=3, memory_mib=1024, cpu_oversubscription=True)
    counted = count_host(FleetIndex([h]), 0, build_request(v))
    assert counted is not None
    assert counted[0] == count_on_host(h, v, Options())[0] == 2
