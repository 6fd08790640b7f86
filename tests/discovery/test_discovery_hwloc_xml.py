"""hwloc XML exports -> CHD, checked against the corpus README (tests/data/hwloc-xml/README.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from nfvplace import load
from nfvplace.discovery import chd_from_hwloc_xml
from nfvplace.discovery.hwloc_xml import parse_hwloc_xml, parse_hwloc_xml_file
from nfvplace.discovery.hwtopo import parse_bitmap
from nfvplace.errors import DiscoveryError
from nfvplace.models import ComputeHostDescriptor, dump


@dataclass(frozen=True)
class Expected:
    packages: int
    nodes: int
    cores: int
    pus: int
    # NIC port PCI address -> NUMA node it must be listed under (README "near N#k")
    nics: dict[str, int]


# The README table, row by row.
CORPUS_TABLE: dict[str, Expected] = {
    "16intel64-manyVFs.xml": Expected(
        2,
        2,
        16,
        16,
        {
            "0000:02:00.0": 0,
            "0000:02:00.1": 0,
            "0000:0b:00.0": 0,
            "0000:0c:00.0": 0,
            "0000:88:00.0": 1,
            "0000:89:00.0": 1,
        },
    ),
    "24em64t-2n6c2t-pci.xml": Expected(
        2, 2, 12, 24, {"0000:04:00.0": 0, "0000:04:00.1": 0, "0000:05:00.0": 0}
    ),
    "32em64t-2n8c2t-pci-normalio.xml": Expected(
        2, 2, 16, 32, {"0000:81:00.0": 1, "0000:81:00.1": 1, "0000:04:00.0": 1}
    ),
    "64intel64-3g2n+2n-irregulargroups+pci.xml": Expected(
        8, 8, 64, 64, {"0000:01:00.0": 0, "0000:01:00.1": 0}
    ),
    "96em64t-4n4d3ca2co-pci.xml": Expected(
        16,
        4,
        96,
        96,
        {
            "0000:02:00.0": 0,
            "0000:02:00.1": 0,
            "0000:32:00.0": 1,
            "0000:32:00.1": 1,
            "0000:62:00.0": 2,
            "0000:62:00.1": 2,
            "0000:92:00.0": 3,
            "0000:92:00.1": 3,
        },
    ),
    "192em64t-24n8c2t.xml": Expected(
        24,
        24,
        192,
        384,
        {
            "0002:03:00.0": 4,
            "0002:03:00.1": 4,
            "0002:04:00.0": 4,
            "0002:04:00.1": 4,
            "0000:01:00.0": 0,
            "0000:01:00.1": 0,
            "0003:01:00.0": 6,
        },
    ),
    "8em64t-2p2ca2co-nonodesets.v1tov2.xml": Expected(
        2, 1, 8, 8, {"0000:03:00.0": 0, "0000:07:00.0": 0, "0000:0a:00.0": 0}
    ),
    "doc-devel09-pci.xml": Expected(
        2, 2, 4, 4, {"0000:01:00.0": 0, "0000:01:00.1": 0, "0000:51:00.0": 0}
    ),
    "memorysidecaches.xml": Expected(2, 4, 40, 80, {}),
    "linux-32intel64-2p8co2t+8ve.xml": Expected(
        2,
        2,
        16,
        32,
        {"0000:60:00.0": 0, "0000:60:00.1": 0, "0000:1a:00.0": 0, "0000:3e:00.0": 0},
    ),
    "linux-32em64t-2n8c+dax+nvme+mic+dimms.xml": Expected(
        2, 2, 16, 16, {"0000:02:00.0": 0, "0000:02:00.3": 0, "0000:82:00.0": 1}
    ),
    # "near N#0+N#2" / "near N#1+N#3": listed under the first node of the locality
    "linux-40intel64-2g2n4c+pcilocality.xml": Expected(
        4,
        4,
        40,
        40,
        {
            "0000:02:00.0": 0,
            "0000:02:00.1": 0,
            "0000:03:00.0": 0,
            "0000:03:00.1": 0,
            "0000:43:00.0": 1,
        },
    ),
    "linux-128arm-2pa2n8cluster4co.xml": Expected(2, 4, 128, 128, {}),
    "linux-64amd64-4s2n4ca2co.xml": Expected(4, 8, 64, 64, {}),
    "x86cpuid-AMD-19h-Zen4-2xEpyc-9654.xml": Expected(2, 2, 192, 384, {}),
    "x86cpuid-Intel-SapphireRapids-2xXeonMax9460.xml": Expected(2, 1, 80, 160, {}),
    "pyhwloc-segfault/16amd64-4distances.xml": Expected(8, 8, 16, 16, {}),
    "pyhwloc-segfault/28intel64-2p2g7c-CoDgroups.v1tov2.xml": Expected(
        2, 4, 28, 28, {"0000:06:00.0": 0, "0000:0c:00.0": 0}
    ),
}


def test_table_covers_every_corpus_file(corpus: Path) -> None:
    files = {str(p.relative_to(corpus)) for p in corpus.rglob("*.xml")}
    assert files == set(CORPUS_TABLE)


@pytest.mark.parametrize("name", sorted(CORPUS_TABLE))
def test_corpus_file_gives_chd_with_readme_counts(corpus: Path, name: str, tmp_path: Path) -> None:
    expected = CORPUS_TABLE[name]
    chd = chd_from_hwloc_xml(corpus / name)
    cpus = chd.cpus
    assert len({c.package for c in cpus}) == expected.packages
    assert chd.processor.packages == expected.packages
    assert len(chd.numa_nodes) == expected.nodes
    assert len({c.core for c in cpus}) == expected.cores
    assert len(cpus) == expected.pus
    assert len({c.id for c in cpus}) == expected.pus
    ports = {
        port.pci_address: node.id
        for node in chd.numa_nodes
        for nic in node.nics
        for port in nic.ports
    }
    assert ports == expected.nics
    # siblings: every PU of a core lists the same siblings, itself included
    for cpu in cpus:
        assert cpu.id in cpu.siblings
        assert all(c.core == cpu.core for c in cpus if c.id in cpu.siblings)
    # the CHD is a valid document: dump, load back through nfvplace.load, equal
    out = tmp_path / "host.yaml"
    out.write_text(dump(chd), encoding="utf-8")
    loaded = load(out)
    assert isinstance(loaded, ComputeHostDescriptor)
    assert loaded == chd
    assert chd.provenance is not None
    assert chd.provenance.source == "hwloc-xml"


def test_cgroup_restricted_file_keeps_disallowed_pus_ineligible(corpus: Path) -> None:
    chd = chd_from_hwloc_xml(corpus / "64intel64-3g2n+2n-irregulargroups+pci.xml")
    eligible = sorted(c.id for c in chd.cpus if c.eligible)
    assert len(chd.cpus) == 64
    assert eligible == list(range(16))  # allowed_cpuset="0x0000ffff"
    assert {c.id for c in chd.cpus if not c.eligible} == set(range(16, 64))
    assert chd.provenance is not None
    assert any("outside the allowed cpuset" in note for note in chd.provenance.notes)


def test_unrestricted_file_has_every_pu_eligible(corpus: Path) -> None:
    chd = chd_from_hwloc_xml(corpus / "32em64t-2n8c2t-pci-normalio.xml")
    assert all(c.eligible for c in chd.cpus)


def test_many_vfs_are_attached_to_their_physical_functions(corpus: Path) -> None:
    chd = chd_from_hwloc_xml(corpus / "16intel64-manyVFs.xml")
    vfs = {
        port.pci_address: [vf.pci_address for vf in port.vfs]
        for node in chd.numa_nodes
        for nic in node.nics
        for port in nic.ports
    }
    assert vfs["0000:0b:00.0"] == ["0000:0b:00.1", "0000:0b:00.2", "0000:0b:00.3"]
    # the two 1138:00cf VFs belong to the Cisco PF as well
    assert vfs["0000:0c:00.0"] == [f"0000:0c:00.{f}" for f in range(1, 5)]
    assert vfs["0000:88:00.0"] == [f"0000:88:00.{f}" for f in range(1, 6)]
    assert vfs["0000:89:00.0"] == []
    assert sum(len(v) for v in vfs.values()) == 12
    # VFs are never ports
    assert not any(
        address.endswith((".1", ".2")) and address.startswith("0000:0b") for address in vfs
    )


def test_hugepage_pools_come_from_page_type(corpus: Path) -> None:
    chd = chd_from_hwloc_xml(corpus / "linux-32intel64-2p8co2t+8ve.xml")
    for node in chd.numa_nodes:
        pools = {p.size_kib: p.total for p in node.memory.hugepages}
        assert pools == {2048: 2048, 1048576: 0}
        assert node.memory.total_mib > node.memory.hugepage_mib
    arm = chd_from_hwloc_xml(corpus / "linux-128arm-2pa2n8cluster4co.xml")
    sizes = {p.size_kib for p in arm.numa_nodes[0].memory.hugepages}
    assert sizes == {64, 2048, 32768, 1048576}  # 4 KiB base page excluded


def test_memory_and_distances(corpus: Path) -> None:
    chd = chd_from_hwloc_xml(corpus / "32em64t-2n8c2t-pci-normalio.xml")
    assert [n.memory.total_mib for n in chd.numa_nodes] == [34330173440 // 2**20, 32768]
    assert chd.numa_distances == ((10, 20), (20, 10))


def test_distances_reordered_from_os_indexes(corpus: Path) -> None:
    chd = chd_from_hwloc_xml(corpus / "pyhwloc-segfault/16amd64-4distances.xml")
    assert chd.numa_distances is not None
    assert len(chd.numa_distances) == 8
    assert all(chd.numa_distances[i][i] == 10 for i in range(8))
    matrix = chd.numa_distances
    assert all(matrix[i][j] == matrix[j][i] for i in range(8) for j in range(8))
    # indexes "1 0 2 5 4 3 6 7": row 0 of the file is node 1, whose distance to node 0 is 20
    assert matrix[1][0] == 20


def test_cpu_only_file_says_memory_is_unknown(corpus: Path) -> None:
    chd = chd_from_hwloc_xml(corpus / "x86cpuid-AMD-19h-Zen4-2xEpyc-9654.xml")
    assert chd.provenance is not None
    assert "numa_nodes[*].memory.total_mib" in chd.provenance.unknown
    assert "processor.flags" in chd.provenance.unknown


def test_wide_locality_is_noted(corpus: Path) -> None:
    chd = chd_from_hwloc_xml(corpus / "linux-40intel64-2g2n4c+pcilocality.xml")
    assert chd.provenance is not None
    assert any("local to NUMA nodes 0, 2" in note for note in chd.provenance.notes)


def test_host_id_defaults_to_file_name_and_can_be_given(corpus: Path) -> None:
    path = corpus / "doc-devel09-pci.xml"
    assert chd_from_hwloc_xml(path).id == "doc-devel09-pci"
    assert chd_from_hwloc_xml(path, host_id="compute-07").id == "compute-07"


# --- malformed input: a clean DiscoveryError, never a crash ----------------------------------------

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE topology [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<topology version="2.0"><object type="Machine" os_index="0">&lol3;</object></topology>
"""

EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE topology [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<topology version="2.0"><object type="Machine">&xxe;</object></topology>
"""


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "not well-formed XML"),
        (b"this is not XML at all", "not well-formed XML"),
        (b"\x00\xff\xfe binary", "XML"),
        (BILLION_LAUGHS, "entities"),
        (EXTERNAL_ENTITY, "entities"),
        (b'<?xml version="1.0"?><html><body/></html>', "not <topology>"),
        (b'<topology><object type="Machine"/></topology>', "version"),
        (b'<topology version="1.0"><object type="Machine"/></topology>', "version"),
        (b'<topology version="2.0"></topology>', "exactly one root"),
        (
            b'<topology version="2.0"><object type="Machine" cpuset="0x1"/></topology>',
            "no PU objects",
        ),
        (
            b'<topology version="2.0"><object type="Machine"><object type="PU"/></object></topology>',
            "PU has no os_index",
        ),
        (
            b'<topology version="2.0"><object type="Machine" cpuset="zz">'
            b'<object type="PU" os_index="0"/></object></topology>',
            "not an hwloc bitmap",
        ),
        (
            b'<topology version="2.0"><object type="Machine">'
            b'<object type="PU" os_index="x"/></object></topology>',
            "not an integer",
        ),
        (
            b'<topology version="2.0"><object type="Machine">'
            b'<object type="PU" os_index="0"/><object type="PU" os_index="0"/></object></topology>',
            "two PU objects",
        ),
        (
            b'<topology version="2.0"><object type="Machine">'
            b'<object type="PU" os_index="999999999999"/></object></topology>',
            "beyond",
        ),
    ],
)
def test_malformed_xml_gives_clean_error(data: bytes, message: str) -> None:
    with pytest.raises(DiscoveryError) as info:
        parse_hwloc_xml(data, "bad.xml")
    assert info.value.code == "nfvplace.discovery.failed"
    assert message in str(info.value)
    assert info.value.file == "bad.xml"


def test_truncated_corpus_file_gives_clean_error(corpus: Path) -> None:
    data = (corpus / "192em64t-24n8c2t.xml").read_bytes()
    for cut in (10, 200, len(data) // 3, len(data) - 20):
        with pytest.raises(DiscoveryError, match="not well-formed XML"):
            parse_hwloc_xml(data[:cut], "cut.xml")


def test_deeply_nested_objects_are_refused_not_crashing() -> None:
    depth = 5000
    data = (
        b'<topology version="2.0">'
        + b'<object type="Group">' * depth
        + b'<object type="PU" os_index="0"/>'
        + b"</object>" * depth
        + b"</topology>"
    )
    with pytest.raises(DiscoveryError):
        parse_hwloc_xml(data, "deep.xml")


def test_missing_file_gives_clean_error(tmp_path: Path) -> None:
    with pytest.raises(DiscoveryError, match="cannot read file"):
        parse_hwloc_xml_file(tmp_path / "absent.xml")


def test_minimal_hand_written_topology() -> None:
    topo = parse_hwloc_xml(
        b'<topology version="2.0"><object type="Machine" cpuset="0x3">'
        b'<object type="Core"><object type="PU" os_index="0"/><object type="PU" os_index="1"/>'
        b"</object></object></topology>"
    )
    assert [p.os_index for p in topo.pus] == [0, 1]
    assert topo.core_count == 1
    assert [n.os_index for n in topo.nodes] == [0]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0x00000003", 3),
        ("0xffffffff,0x0000000f", (0xFFFFFFFF << 32) | 0xF),
        ("0x000000ff,,,,,,0x000000ff", (0xFF << 192) | 0xFF),
        ("0x000000ff,0x0", 0xFF << 32),
        ("0xf...f,0x1", (0xFFFFFFFF << 32) | 1),
        (None, None),
    ],
)
def test_parse_bitmap(text: str | None, value: int | None) -> None:
    assert parse_bitmap(text) == value


def test_parse_bitmap_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="bad bitmap word"):
        parse_bitmap("ff")


def _bus(functions: list[tuple[str, str, str | None]]) -> bytes:
    """A one-node topology with network PCI functions (busid, vendor:device, netdev or None)."""
    devices = b""
    for busid, ids, netdev in functions:
        osdev = f'<object type="OSDev" name="{netdev}" osdev_type="2"/>' if netdev else ""
        devices += (
            f'<object type="PCIDev" pci_busid="{busid}" pci_type="0200 [{ids}] [0000:0000] 01">'
            f"{osdev}</object>"
        ).encode()
    return (
        b'<topology version="2.0"><object type="Machine" cpuset="0x1" nodeset="0x1">'
        b'<object type="NUMANode" os_index="0" cpuset="0x1" nodeset="0x1" local_memory="1073741824"/>'
        b'<object type="PU" os_index="0" cpuset="0x1" nodeset="0x1"/>'
        b'<object type="Bridge" gp_index="9" bridge_type="0-1" depth="0">'
        + devices
        + b"</object></object></topology>"
    )


@pytest.mark.parametrize(
    ("functions", "expected"),
    [
        (  # unknown VF id, no OS device, next to its PF: a VF by absence (with a note)
            [("0000:05:00.0", "abcd:1000", "eth0"), ("0000:05:00.1", "abcd:1001", None)],
            {"0000:05:00.0": ["0000:05:00.1"]},
        ),
        (  # same device id as the PF: a second port without a driver, not a VF
            [("0000:05:00.0", "abcd:1000", "eth0"), ("0000:05:00.1", "abcd:1000", None)],
            {"0000:05:00.0": [], "0000:05:00.1": []},
        ),
        (  # alone on its bus: a port without a driver, not a VF
            [("0000:05:00.0", "abcd:1000", "eth0"), ("0000:06:00.0", "abcd:1001", None)],
            {"0000:05:00.0": [], "0000:06:00.0": []},
        ),
        (  # a table VF id is a VF even with an OS device
            [("0000:05:00.0", "8086:1572", "eth0"), ("0000:05:02.0", "8086:154c", "eth9")],
            {"0000:05:00.0": ["0000:05:02.0"]},
        ),
    ],
)
def test_vf_recognition(
    functions: list[tuple[str, str, str | None]], expected: dict[str, list[str]]
) -> None:
    from nfvplace.discovery.build import build_chd

    chd = build_chd(parse_hwloc_xml(_bus(functions)), "h")
    ports = {p.pci_address: [vf.pci_address for vf in p.vfs] for p in chd.numa_nodes[0].ports}
    assert ports == expected
