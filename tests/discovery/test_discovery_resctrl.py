"""L3 cache allocation from resctrl and sysfs (live), and from an hwloc export (caches only)."""

from __future__ import annotations

from pathlib import Path

from nfvplace.discovery import chd_from_hwloc_xml
from nfvplace.discovery.resctrl import parse_schemata, read_cache_allocation

CORPUS = Path(__file__).resolve().parents[1] / "data" / "hwloc-xml"


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _host(root: Path) -> None:
    """Two NUMA nodes of two PUs, each node its own 11-way 28 MiB L3; resctrl with one exclusive
    group (a VM's, named after its instance) and one shareable group."""
    _write(root, "sys/fs/resctrl/info/L3/cbm_mask", "7ff\n")
    _write(root, "sys/fs/resctrl/info/L3/num_closids", "16\n")
    _write(root, "sys/fs/resctrl/info/L3/min_cbm_bits", "1\n")
    _write(root, "sys/fs/resctrl/schemata", "    MB:0=100;1=100\n    L3:0=1ff;1=7ff\n")
    _write(root, "sys/fs/resctrl/p-1%2Fran.du-1/mode", "exclusive\n")
    _write(root, "sys/fs/resctrl/p-1%2Fran.du-1/schemata", "L3:0=600;1=600\n")
    _write(root, "sys/fs/resctrl/monitoring/mode", "shareable\n")
    _write(root, "sys/fs/resctrl/monitoring/schemata", "L3:0=1ff;1=7ff\n")
    (root / "sys/fs/resctrl/info/MB").mkdir(parents=True)
    for node, cpus in ((0, (0, 1)), (1, (2, 3))):
        _write(root, f"sys/devices/system/node/node{node}/cpulist", f"{cpus[0]}-{cpus[1]}\n")
        for cpu in cpus:
            base = f"sys/devices/system/cpu/cpu{cpu}/cache/index3"
            _write(root, f"{base}/id", f"{node}\n")
            _write(root, f"{base}/size", "28160K\n")


def test_schemata_lines() -> None:
    assert parse_schemata("MB:0=100\nL3:0=7ff;1=00c\n") == {0: 0x7FF, 1: 0xC}
    assert parse_schemata("MB:0=100\n") == {}


def test_resctrl_gives_caches_ways_allocations_and_classes(tmp_path: Path) -> None:
    _host(tmp_path)
    allocation = read_cache_allocation(tmp_path)
    assert allocation == {
        "classes": 16,
        "classes_used": 1,  # the shareable group
        "min_ways": 1,
        "domains": [
            {
                "id": d,
                "numa_nodes": [d],
                "ways": 11,
                "way_kib": 2560,
                "allocations": [{"first_way": 9, "ways": 2, "owner": "p-1/ran.du-1"}],
            }
            for d in (0, 1)
        ],
    }


def test_no_resctrl_no_cache_allocation(tmp_path: Path) -> None:
    (tmp_path / "sys/fs").mkdir(parents=True)
    assert read_cache_allocation(tmp_path) is None


def test_an_hwloc_export_gives_the_caches_but_not_the_classes() -> None:
    chd = chd_from_hwloc_xml(CORPUS / "memorysidecaches.xml")
    allocation = chd.cache_allocation
    assert allocation is not None
    assert allocation.classes is None  # only resctrl says
    assert [(d.id, d.numa_nodes, d.ways, d.way_kib) for d in allocation.domains] == [
        (0, (0, 2), 11, 2560),
        (1, (1, 3), 11, 2560),
    ]
    assert chd.provenance is not None
    assert "cache_allocation.classes" in chd.provenance.unknown


def test_live_discovery_states_the_cache_allocation(tmp_path: Path) -> None:
    from test_discovery_sysfs import build_tree

    from nfvplace.discovery import discover_live

    tree = build_tree(tmp_path / "host")
    _host(tree)  # the same two nodes (PUs 0-1 and 2-3 by node cpulist), now with resctrl
    chd = discover_live(sysfs_root=tree)
    assert chd.cache_allocation is not None
    assert chd.cache_allocation.classes == 16
    assert [d.numa_nodes for d in chd.cache_allocation.domains] == [(0,), (1,)]
    without = discover_live(sysfs_root=build_tree(tmp_path / "plain"))
    assert without.cache_allocation is None
