"""Differential fuzzer: the engine against the brute-force reference placer (`reference.py`).

On small random hosts and VMs, every decision must agree: the engine places the VM exactly when the
reference finds a way, and every placement passes the independent checker (`checker.py`). CI runs a
fixed budget; `NFVPLACE_FUZZ_EXAMPLES=20000` runs longer on demand.
"""

from __future__ import annotations

import json
import os
from typing import Any

from checker import violations
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from reference import fits

import nfvplace
from nfvplace.errors import LintError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor

FUZZ = settings(
    max_examples=int(os.environ.get("NFVPLACE_FUZZ_EXAMPLES", "2000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
NETWORKS = [None, None, "a", "b"]


@st.composite
def chds(draw: st.DrawFn, name: str) -> ComputeHostDescriptor:
    threads = draw(st.sampled_from([1, 2, 2, 2, 4]))
    n_nodes = draw(st.integers(1, 2))
    cores = [draw(st.integers(0, 3 if threads == 4 else 4)) for _ in range(n_nodes)]
    total = sum(cores)
    nodes = []
    core = 0
    bus = 0x10
    for j in range(n_nodes):
        cpus = []
        for _ in range(cores[j]):
            siblings = [core + k * total for k in range(threads)]
            for t in siblings:
                cpu: dict[str, Any] = {"id": t, "core": core, "siblings": siblings}
                state = draw(st.sampled_from(["free"] * 5 + ["used", "ineligible", "shared"]))
                if state == "used":
                    cpu.update(state="dedicated", owner="other")
                elif state == "ineligible":
                    cpu["eligible"] = False
                elif state == "shared":
                    cpu.update(
                        state=draw(st.sampled_from(["shared", "free"])),
                        oversubscription_ratio=draw(st.sampled_from([1.0, 2.0, 6.0])),
                        usage_ratio=draw(st.sampled_from([0.0, 0.5, 5 / 6])),
                    )
                cpus.append(cpu)
            core += 1
        pages = draw(st.integers(0, 4))
        nics = []
        for _ in range(draw(st.integers(0, 2))):
            ports = []
            for p in range(draw(st.integers(1, 2))):
                n_vfs = draw(st.integers(0, 3))
                used_vfs = draw(st.integers(0, n_vfs))
                speed = draw(st.sampled_from([10.0, 25.0]))
                ports.append(
                    {
                        "pci_address": f"0000:{bus:02x}:00.{p}",
                        "speed_gbps": speed,
                        "eligible": draw(st.booleans()) or True,
                        "usage": "sriov"
                        if used_vfs
                        else draw(st.sampled_from(["free", "free", "dedicated"])),
                        "bandwidth_used_gbps": draw(st.sampled_from([0.0, 0.0, 5.0, 9.9]))
                        if used_vfs
                        else 0.0,
                        "physical_network": draw(st.sampled_from(NETWORKS)),
                        "vfs": [
                            {
                                "pci_address": f"0000:{bus:02x}:{1 + p:02x}.{v}",
                                "in_use": v < used_vfs,
                                "rate_gbps": draw(st.sampled_from([None, None, 1.0, 5.0])),
                            }
                            for v in range(n_vfs)
                        ],
                    }
                )
            nics.append(
                {
                    "vendor": "Intel",
                    "model": "E810",
                    "pcie_bandwidth_gbps": draw(st.sampled_from([None, None, 8.0, 16.0])),
                    "ports": ports,
                }
            )
            bus += 1
        nodes.append(
            {
                "id": j,
                "cpus": sorted(cpus, key=lambda c: c["id"]),
                "memory": {
                    "total_mib": pages * 1024 + draw(st.sampled_from([2048, 4096, 8192])),
                    "hugepages": [
                        {"size_kib": 1048576, "total": pages, "used": draw(st.integers(0, pages))}
                    ],
                    "bandwidth_gbps": draw(st.sampled_from([None, 0.3, 1.0])),
                    "bandwidth_used_gbps": draw(st.sampled_from([0.0, 0.2])),
                },
                "nics": nics,
            }
        )
    links = []
    if n_nodes == 2 and draw(st.booleans()):
        links.append({"nodes": [0, 1], "bandwidth_gbps": 0.3, "bandwidth_used_gbps": 0.2})
    return ComputeHostDescriptor.model_validate(
        {
            "schema": "nfvplace/chd/v1",
            "id": name,
            "processor": {"vendor": "GenuineIntel", "model": "Intel(R) Xeon(R) Gold 6248"},
            "hypervisor": {"type": "kvm", "capabilities": ["cpu_pinning"]},
            "numa_nodes": nodes,
            "interconnect": links,
        }
    )


@st.composite
def interfaces(draw: st.DrawFn, prefix: str, most: int) -> list[dict[str, Any]]:
    out = []
    for k in range(draw(st.integers(0, most))):
        mode = draw(st.sampled_from(["sriov", "sriov", "dedicated"]))
        iface: dict[str, Any] = {"name": f"{prefix}{k}", "mode": mode}
        speed = draw(st.sampled_from([None, 10, 25]))
        if speed:
            iface["speed_gbps"] = speed
        bw = draw(st.sampled_from([None, 1, 2, 5, 12]))
        if bw and speed:
            bw = min(bw, speed)  # more than the port speed is a lint error (NFV301)
        if bw:
            iface["bandwidth_gbps"] = bw
        network = draw(st.sampled_from(NETWORKS))
        if network:
            iface["physical_network"] = network
        out.append(iface)
    return out


@st.composite
def vmds(draw: st.DrawFn) -> VmDescriptor:
    data: dict[str, Any] = {"schema": "nfvplace/vmd/v1", "name": "fz"}
    kind = draw(st.sampled_from(["sets", "sets", "sets", "plain", "shared", "floating"]))
    if kind in ("plain", "shared"):
        data.update(vcpus=draw(st.integers(1, 6)), memory_mib=draw(st.sampled_from([256, 2048])))
        data["cpu_oversubscription"] = kind == "shared"
        if kind == "plain" and draw(st.booleans()):
            data["cpu_thread_policy"] = draw(st.sampled_from(["isolate", "prefer", "require"]))
        data["interfaces"] = draw(interfaces("t", 1))
        return VmDescriptor.model_validate(data)
    sets = []
    first = 0
    for k in range(draw(st.integers(1, 2))):
        n = draw(st.integers(1, 5))
        ids = list(range(first, first + n))
        first += n
        cs: dict[str, Any] = {
            "id": k,
            "vcpus": ids,
            "memory_mib": draw(st.sampled_from([512, 2048])),
        }
        policy = draw(st.sampled_from([None, "isolate", "prefer", "require"]))
        if kind == "floating":
            cs["floating"] = True
            policy = "floating"  # no thread policy, no pairs
        elif policy:
            cs["thread_policy"] = policy
        if policy not in ("require", "floating") and draw(st.booleans()):
            cs["howtogroup"] = [[ids[i], ids[i + 1]] for i in range(0, n - 1, 2)][
                : draw(st.integers(0, n // 2))
            ]
        elif policy == "require":
            cs["howtogroup"] = [[ids[i], ids[i + 1]] for i in range(0, n - 1, 2)]
        pages = draw(st.integers(0, 2))
        word = draw(st.sampled_from([None, None, "large", "any"]))
        if pages and word:  # the whole memory in pages of a size chosen on the node
            cs["hugepages"] = {"size": word}
            cs["memory_mib"] = pages * 1024 + draw(st.sampled_from([0, 0, 512]))
        elif pages:
            cs["hugepages"] = {"size": "1GiB", "count": pages}
            cs["memory_mib"] += pages * 1024
        if draw(st.integers(0, 3)) == 0:
            cs["memory_bandwidth_gbps"] = draw(st.sampled_from([0.1, 0.5]))
        cs["interfaces"] = draw(interfaces(f"c{k}e", 2))
        sets.append(cs)
    data["cpu_sets"] = sets
    data["cpu_thread_policy"] = draw(st.sampled_from(["isolate", "prefer"]))
    data["emulator_threads"] = draw(st.sampled_from(["share", "isolate"]))
    if kind == "floating":
        data["emulator_threads"] = "share"
        data["cpu_oversubscription"] = draw(st.booleans())
    data["cpu_sets_may_share_node"] = draw(st.booleans())
    if len(sets) == 2 and draw(st.booleans()):
        data["cpu_set_bandwidth"] = [{"cpu_sets": [0, 1], "bandwidth_mbps": 100}]
    if draw(st.booleans()):
        data["interfaces"] = draw(interfaces("t", 1))
    return VmDescriptor.model_validate(data)


@FUZZ
@given(
    hosts=st.lists(st.integers(0, 1000), min_size=1, max_size=2).flatmap(
        lambda keys: st.tuples(*(chds(f"h{k}") for k in range(len(keys))))
    ),
    vm=vmds(),
    policy=st.sampled_from(["pack", "spread", "least-fragmentation"]),
)
def test_engine_agrees_with_the_brute_force_reference(
    hosts: tuple[ComputeHostDescriptor, ...], vm: VmDescriptor, policy: str
) -> None:
    fleet = list(hosts)
    note(json.dumps([h.model_dump(mode="json", by_alias=True) for h in fleet]))
    note(json.dumps(vm.model_dump(mode="json", by_alias=True, exclude_defaults=True)))
    try:
        result = nfvplace.place(fleet, vm, policy=policy)
    except LintError:  # place refuses what lint refuses: nothing to compare
        assume(False)
        return
    expected = fits(fleet, vm)
    summary = result.diagnosis.summary if result.diagnosis else ""
    assert result.ok == expected, f"engine {'placed' if result.ok else 'refused'}: {summary}"
    if result.ok:
        assert violations(fleet, vm, result.configurations) == []
    else:
        assert result.diagnosis is not None
        assert all(r.reason != "internal" for r in result.diagnosis.rejections)
