"""Each kind whose resource the kubelet hands out reads its pools of a NUMA node (`KubeletCounts`),
in the kubelet's units; the Kubernetes door adds them up per node (`state.node_state`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nfvplace.integrations.kubernetes.state import Pool, node_state
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.placement.resources import KINDS, KUBELET_COUNTS
from nfvplace.placement.resources.kubelet import KubeletPool, hugepages_name
from nfvplace.placement.resources.stages import KubeletCounts
from nfvplace.reader import load_document, read_path

GIB = 2**30
TESLA = "Tesla M2075 Dual-Slot Computing Processor Module"


@pytest.fixture
def host(root: Path) -> ComputeHostDescriptor:
    chd = load_document(read_path(root / "examples/hosts/supermicro-x9drg-2s-e5-2650.yaml"))
    assert isinstance(chd, ComputeHostDescriptor)
    return chd


# NUMA node 1 of the example host: 16 PUs, 14 eligible, 8 of those free; 32 GiB with 2,048 pages
# of 2 MiB (512 used) and 16 of 1 GiB (2 used); one port with 8 VFs on physnet-data (2 in use);
# three PCI devices, two of them the same Tesla model.
NODE_1 = {
    "cpu": [KubeletPool("cpu", "cpu", 14, 8, total=16)],
    "memory": [
        KubeletPool("memory", "memory", 12 * GIB, 12 * GIB, in_use=True),
        KubeletPool("memory", "hugepages-2Mi", 4 * GIB, 3 * GIB, in_use=True),
        KubeletPool("memory", "hugepages-1Gi", 16 * GIB, 14 * GIB, in_use=True),
    ],
    "nics": [KubeletPool("device", "physnet-data", 8, 6)],
    "devices": [
        KubeletPool("device", TESLA, 1, 1),
        KubeletPool("device", TESLA, 1, 1),
        KubeletPool("device", "Tahiti XT [Radeon HD 7970/8970 OEM / R9 280X]", 1, 1),
    ],
}


@pytest.mark.parametrize("kind", KUBELET_COUNTS, ids=lambda k: str(k.name))
def test_each_kind_reads_its_pools_of_a_node(
    kind: KubeletCounts, host: ComputeHostDescriptor
) -> None:
    assert list(kind.kubelet_pools(host, host.numa_nodes[1])) == NODE_1[kind.name]


def test_only_the_kinds_the_kubelet_hands_out_count() -> None:
    counted = {k.name for k in KINDS if isinstance(k, KubeletCounts)}
    assert counted == set(NODE_1)


def test_memory_counts_only_where_the_memory_manager_pins(host: ComputeHostDescriptor) -> None:
    assert host.hypervisor is not None
    unpinned = host.model_copy(
        update={"hypervisor": host.hypervisor.model_copy(update={"capabilities": ()})}
    )
    memory = next(k for k in KUBELET_COUNTS if k.name == "memory")
    assert list(memory.kubelet_pools(unpinned, unpinned.numa_nodes[1])) == []
    assert node_state(unpinned).memory == {}
    assert node_state(unpinned).memory_groups == {}


def test_the_door_adds_up_the_kinds_pools(host: ComputeHostDescriptor) -> None:
    state = node_state(host)
    assert state.cpu_total == {0: 16, 1: 16}
    assert state.cpus[1] == Pool(14, 8)
    assert state.memory["hugepages-1Gi"][1] == Pool(16 * GIB, 14 * GIB)
    assert state.devices[TESLA] == {0: Pool(1, 1), 1: Pool(2, 2)}  # two on node 1, one pool
    assert state.memory_groups == {0: 1, 1: 2}
    assert list(state.devices) == [
        TESLA,
        "MGA G200eW WPCM450",
        "physnet-data",
        NODE_1["devices"][2].resource,
    ]


@pytest.mark.parametrize(
    ("size_kib", "name"),
    [
        (1048576, "hugepages-1Gi"),
        (2048, "hugepages-2Mi"),
        (16384, "hugepages-16Mi"),
        (64, "hugepages-64Ki"),
    ],
)
def test_hugepage_sizes_take_the_kubelets_names(size_kib: int, name: str) -> None:
    assert hugepages_name(size_kib) == name
