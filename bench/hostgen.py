"""A seeded fleet generator shaped like the real machines in tests/data/hwloc-xml/.

The CPU topology of each machine (NUMA nodes, cores per node, threads per core, PU ids, memory per
node) is read from its hwloc XML export (a minimal parse: every Core object's nodeset and PU
children). What the exports do not say is synthesised, seeded: NICs (E810-like ports with 8 VFs, on one
node, or on every node for half of the hosts), 1 GiB hugepage pools (half of each node's memory), a host-reserved core per node,
a small shared pool, and realistic partial use (0-70 % of cores taken by other VMs, one in five of them
only half: one thread used, its sibling free).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lxml import etree

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor

HWLOC = Path(__file__).resolve().parents[1] / "tests" / "data" / "hwloc-xml"

# file, weight, vendor, model, default memory per node (GiB) when the export has none
MACHINES: list[tuple[str, int, str, str, int]] = [
    (
        "32em64t-2n8c2t-pci-normalio.xml",
        3,
        "GenuineIntel",
        "Intel(R) Xeon(R) CPU E5-2650 0 @ 2.00GHz",
        0,
    ),
    (
        "linux-32intel64-2p8co2t+8ve.xml",
        2,
        "GenuineIntel",
        "Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz",
        0,
    ),
    ("memorysidecaches.xml", 2, "GenuineIntel", "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", 0),
    ("24em64t-2n6c2t-pci.xml", 1, "GenuineIntel", "Intel(R) Xeon(R) CPU X5650 @ 2.67GHz", 0),
    ("96em64t-4n4d3ca2co-pci.xml", 1, "GenuineIntel", "Intel(R) Xeon(R) CPU E7450 @ 2.40GHz", 0),
    ("16intel64-manyVFs.xml", 1, "GenuineIntel", "Intel(R) Xeon(R) CPU E5-2650 v2 @ 2.60GHz", 0),
    (
        "linux-40intel64-2g2n4c+pcilocality.xml",
        1,
        "GenuineIntel",
        "Intel(R) Xeon(R) CPU E7-4870 @ 2.40GHz",
        0,
    ),
    (
        "x86cpuid-AMD-19h-Zen4-2xEpyc-9654.xml",
        1,
        "AuthenticAMD",
        "AMD EPYC 9654 96-Core Processor",
        384,
    ),
]
FLAGS = ("vmx", "ept", "pdpe1gb", "aes", "avx2", "sse4_2")
CAPS = [
    "cpu_pinning",
    "numa_memory_pinning",
    "hugepage_numa_pinning",
    "slat",
    "slat_large_pages",
    "iommu",
    "iommu_large_pages",
    "interrupt_remapping",
]


@dataclass(frozen=True)
class MachineShape:
    name: str
    weight: int
    vendor: str
    model: str
    nodes: tuple[tuple[tuple[int, ...], ...], ...]  # per node, per core: its PU ids
    memory_mib: tuple[int, ...]


def _nodeset_index(text: str | None) -> int:
    if not text:
        return 0
    value = int(
        "".join(word[2:] if word.startswith("0x") else word for word in text.split(",")), 16
    )
    return (value & -value).bit_length() - 1 if value else 0


def parse_machine(path: Path) -> tuple[tuple[tuple[tuple[int, ...], ...], ...], tuple[int, ...]]:
    tree = etree.parse(str(path))
    numa = tree.xpath('//object[@type="NUMANode"]')
    mem = [int(n.get("local_memory") or 0) // (1024 * 1024) for n in numa] or [0]
    per_node: dict[int, list[tuple[int, ...]]] = {}
    for core in tree.xpath('//object[@type="Core"]'):
        pus = tuple(sorted(int(pu.get("os_index")) for pu in core.xpath('./object[@type="PU"]')))
        if pus:
            per_node.setdefault(_nodeset_index(core.get("nodeset")), []).append(pus)
    keys = sorted(per_node)
    return tuple(tuple(per_node[k]) for k in keys), tuple(
        mem[i] if i < len(mem) else mem[-1] for i in range(len(keys))
    )


def machine_shapes() -> list[MachineShape]:
    out = []
    for name, weight, vendor, model, default_gib in MACHINES:
        nodes, memory = parse_machine(HWLOC / name)
        memory = tuple(m if m else default_gib * 1024 for m in memory)
        out.append(MachineShape(name, weight, vendor, model, nodes, memory))
    return out


def _host(shape: MachineShape, host_id: str, rng: random.Random, use: float) -> dict[str, Any]:
    nodes = []
    owner = 0
    nic_node = rng.randrange(len(shape.nodes))
    nics_everywhere = rng.random() < 0.5  # half the hosts have NICs on every node
    bus = 0x18
    for k, cores in enumerate(shape.nodes):
        cpus: list[dict[str, Any]] = []
        order = list(range(len(cores)))
        rng.shuffle(order)
        taken = set(order[: int(len(cores) * use)])
        shared = set(order[-2:]) if len(cores) >= 8 and k == len(shape.nodes) - 1 else set()
        for c, pus in enumerate(cores):
            half = rng.random() < 0.2
            if c in taken:
                owner += 1
            for t, pu in enumerate(pus):
                cpu: dict[str, Any] = {"id": pu, "core": pus[0], "siblings": list(pus)}
                if c == 0:
                    cpu["eligible"] = False  # host-reserved housekeeping core
                elif c in shared:
                    cpu.update(
                        state="shared",
                        oversubscription_ratio=4.0,
                        usage_ratio=round(rng.uniform(0, 0.8), 2),
                    )
                elif c in taken and not (half and t == 1):
                    cpu.update(state="dedicated", owner=f"other-{owner}")
                cpus.append(cpu)
        total_mib = max(shape.memory_mib[k], 8192)
        pages = total_mib // 2048  # half of the node's memory in 1 GiB pages
        nics = []
        if k == nic_node or nics_everywhere:
            for _ in range(rng.choice((1, 2))):
                ports = []
                for p in range(2):
                    used_vfs = int(8 * use * rng.random())
                    ports.append(
                        {
                            "pci_address": f"0000:{bus:02x}:00.{p}",
                            "speed_gbps": rng.choice((25, 25, 10, 100)),
                            "usage": "sriov" if used_vfs else "free",
                            "bandwidth_used_gbps": float(used_vfs),
                            "vfs": [
                                {
                                    "pci_address": f"0000:{bus:02x}:{1 + p:02x}.{v}",
                                    "in_use": v < used_vfs,
                                    "owner": "other" if v < used_vfs else None,
                                }
                                for v in range(8)
                            ],
                        }
                    )
                nics.append({"vendor": "Intel", "model": "E810", "ports": ports})
                bus += 1
        nodes.append(
            {
                "id": k,
                "cpus": cpus,
                "memory": {
                    "total_mib": total_mib,
                    "hugepages": [{"size_kib": 1048576, "total": pages, "used": int(pages * use)}],
                    "normal": {
                        "reserved_mib": 4096,
                        "used_mib": int((total_mib - pages * 1024 - 4096) * use * 0.8),
                    },
                },
                "nics": nics,
            }
        )
    return {
        "schema": "nfvplace/chd/v1",
        "id": host_id,
        "processor": {
            "vendor": shape.vendor,
            "model": shape.model,
            "frequency_mhz": 2400,
            "flags": list(FLAGS),
        },
        "hypervisor": {
            "type": "kvm",
            "version": "8.2.0",
            "capabilities": CAPS,
            "vswitch": {
                "type": "ovs_dpdk",
                "accelerated": True,
                "bandwidth_gbps": 40,
                "bandwidth_used_gbps": round(rng.uniform(0, 20), 1),
            },
        },
        "numa_nodes": nodes,
    }


def iter_fleet(
    n: int, seed: int = 0, max_use: float = 0.7, shapes: list[MachineShape] | None = None
) -> Iterator[ComputeHostDescriptor]:
    """The hosts of `make_fleet`, one at a time (as a scheduler loads them from its store)."""
    rng = random.Random(seed)
    shapes = shapes or machine_shapes()
    weights = [s.weight for s in shapes]
    for i in range(n):
        shape = rng.choices(shapes, weights)[0]
        yield ComputeHostDescriptor.model_validate(
            _host(shape, f"host-{i:05d}", rng, rng.uniform(0, max_use))
        )


def make_fleet(
    n: int, seed: int = 0, max_use: float = 0.7, shapes: list[MachineShape] | None = None
) -> list[ComputeHostDescriptor]:
    return list(iter_fleet(n, seed, max_use, shapes))


# --- request mixes ----------------------------------------------------------------------------


def _pairs(first: int, n: int) -> list[list[int]]:
    return [[first + i, first + i + 1] for i in range(0, n - 1, 2)]


def vran_du(rng: random.Random, k: int) -> VmDescriptor:
    n = rng.choice((8, 12, 16))
    return VmDescriptor.model_validate(
        {
            "name": f"vran-du-{k}",
            "emulator_threads": "isolate",
            "realtime_vcpus": list(range(2, n)),
            "hypervisor": {"required_capabilities": ["cpu_pinning", "hugepage_numa_pinning"]},
            "cpu_sets": [
                {
                    "id": 0,
                    "vcpus": list(range(n)),
                    "howtogroup": _pairs(0, n),
                    "memory_mib": (n + 4) * 1024,
                    "hugepages": {"size": "1GiB", "count": n},
                    "interfaces": [
                        {"name": "fh", "mode": "sriov", "speed_gbps": 25, "bandwidth_gbps": 10},
                        {"name": "mh", "mode": "sriov", "speed_gbps": 10, "bandwidth_gbps": 2},
                    ],
                }
            ],
        }
    )


def vbras_worker(rng: random.Random, k: int) -> VmDescriptor:
    n = rng.choice((4, 6, 8))
    return VmDescriptor.model_validate(
        {
            "name": f"vbras-{k}",
            "cpu_sets": [
                {
                    "id": s,
                    "vcpus": list(range(s * n, (s + 1) * n)),
                    "howtogroup": _pairs(s * n, n),
                    "memory_mib": 6144,
                    "hugepages": {"size": "1GiB", "count": 4},
                    "interfaces": [
                        {"name": f"p{s}", "mode": "sriov", "speed_gbps": 10, "bandwidth_gbps": 5}
                    ],
                }
                for s in range(2)
            ],
            "cpu_set_bandwidth": [{"cpu_sets": [0, 1], "bandwidth_mbps": 500}],
        }
    )


def small_sriov(rng: random.Random, k: int) -> VmDescriptor:
    n = rng.choice((2, 3, 4))
    return VmDescriptor.model_validate(
        {
            "name": f"sriov-{k}",
            "cpu_sets": [
                {
                    "id": 0,
                    "vcpus": list(range(n)),
                    "howtogroup": _pairs(0, n),
                    "memory_mib": 4096,
                    "hugepages": {"size": "1GiB", "count": 2},
                    "interfaces": [
                        {"name": "e0", "mode": "sriov", "speed_gbps": 10, "bandwidth_gbps": 1}
                    ],
                }
            ],
        }
    )


def cloud_vm(rng: random.Random, k: int) -> VmDescriptor:
    n = rng.choice((1, 2, 3, 4, 8))
    return VmDescriptor.model_validate(
        {
            "name": f"cloud-{k}",
            "vcpus": n,
            "memory_mib": 2048 * n,
            "cpu_oversubscription": rng.random() < 0.5,
        }
    )


MIX = ((vran_du, 15), (vbras_worker, 10), (small_sriov, 35), (cloud_vm, 40))


def request_stream(n: int, seed: int = 1) -> list[VmDescriptor]:
    rng = random.Random(seed)
    makers = [m for m, _ in MIX]
    weights = [w for _, w in MIX]
    return [rng.choices(makers, weights)[0](rng, k) for k in range(n)]


def impossible_requests(n: int, seed: int = 2) -> list[VmDescriptor]:
    """Requests that pass the host-level checks but fit no node of any host (for rejection timing)."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        pairs = rng.choice((120, 150, 200))  # more cores than any node of the fleet has
        out.append(
            VmDescriptor.model_validate(
                {
                    "name": f"huge-{k}",
                    "cpu_sets": [
                        {
                            "id": 0,
                            "vcpus": list(range(2 * pairs)),
                            "howtogroup": _pairs(0, 2 * pairs),
                            "memory_mib": 8192,
                            "hugepages": {"size": "1GiB", "count": 4},
                            "interfaces": [
                                {
                                    "name": "e",
                                    "mode": "sriov",
                                    "speed_gbps": 25,
                                    "bandwidth_gbps": 10,
                                }
                            ],
                        }
                    ],
                }
            )
        )
    return out
