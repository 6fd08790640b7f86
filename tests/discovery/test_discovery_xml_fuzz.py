"""Whatever the bytes, parsing an hwloc XML export gives a topology or a DiscoveryError."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nfvplace.discovery.build import build_chd
from nfvplace.discovery.hwloc_xml import parse_hwloc_xml
from nfvplace.errors import DiscoveryError

SAMPLE = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n'
    b'<topology version="2.0"><object type="Machine" os_index="0" cpuset="0x0000000f" '
    b'allowed_cpuset="0x00000007" nodeset="0x3">'
    b'<object type="Package" os_index="0" cpuset="0xf" nodeset="0x3">'
    b'<object type="NUMANode" os_index="0" cpuset="0x3" nodeset="0x1" local_memory="1073741824">'
    b'<page_type size="4096" count="1000"/><page_type size="2097152" count="16"/></object>'
    b'<object type="NUMANode" os_index="1" cpuset="0xc" nodeset="0x2" local_memory="1073741824"/>'
    b'<object type="Core" os_index="0" cpuset="0x3"><object type="PU" os_index="0" cpuset="0x1"/>'
    b'<object type="PU" os_index="1" cpuset="0x2"/></object>'
    b'<object type="Core" os_index="1" cpuset="0xc"><object type="PU" os_index="2" cpuset="0x4"/>'
    b'<object type="PU" os_index="3" cpuset="0x8"/></object></object>'
    b'<object type="Bridge" gp_index="9"><object type="PCIDev" pci_busid="0000:05:00.0" '
    b'pci_type="0200 [8086:1521] [0000:0000] 01"><object type="OSDev" name="eth0" osdev_type="2"/>'
    b"</object></object></object>"
    b'<distances2 type="NUMANode" nbobjs="2" kind="5" indexing="os"><indexes length="4">0 1 </indexes>'
    b'<u64values length="12">10 20 20 10 </u64values></distances2></topology>'
)


def test_sample_is_valid() -> None:
    chd = build_chd(parse_hwloc_xml(SAMPLE), "h")
    assert len(chd.cpus) == 4
    assert [c.id for c in chd.cpus if not c.eligible] == [3]
    assert chd.numa_distances == ((10, 20), (20, 10))


def outcome(data: bytes) -> str:
    """ "chd" when the bytes make a CHD, else the DiscoveryError's code; anything else propagates."""
    try:
        chd = build_chd(parse_hwloc_xml(data, "fuzz.xml"), "fuzz")
    except DiscoveryError as exc:
        return exc.code
    return "chd" if chd.cpus else "empty"


@settings(max_examples=300, deadline=None)
@given(
    cuts=st.lists(
        st.tuples(st.integers(0, len(SAMPLE)), st.integers(0, 12), st.binary(max_size=6)),
        min_size=1,
        max_size=4,
    )
)
def test_mutated_exports_never_crash(cuts: list[tuple[int, int, bytes]]) -> None:
    data = SAMPLE
    for start, length, insert in cuts:
        data = data[:start] + insert + data[start + length :]
    assert outcome(data) in {"chd", "nfvplace.discovery.failed"}


@settings(max_examples=200, deadline=None)
@given(value=st.text(max_size=20))
def test_any_attribute_value_never_crashes(value: str) -> None:
    escaped = value.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
    for attribute in (b'cpuset="0x3"', b'os_index="1"', b'pci_busid="0000:05:00.0"', b'count="16"'):
        data = SAMPLE.replace(
            attribute, attribute.split(b"=")[0] + b'="' + escaped.encode() + b'"', 1
        )
        assert outcome(data) in {"chd", "nfvplace.discovery.failed"}
