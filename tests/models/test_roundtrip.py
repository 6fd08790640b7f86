"""Property: random valid descriptors survive dump -> parse exactly, in YAML and JSON."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from nfvplace.models import (
    ComputeHostDescriptor,
    VmConfiguration,
    VmDescriptor,
    dump,
    parse_document,
    parse_text,
)
from nfvplace.models.capabilities import CapabilitySet, HypervisorCapability, ProcessorFeature

names = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
pci = st.tuples(st.integers(0, 255), st.integers(0, 31), st.integers(0, 7)).map(
    lambda t: f"0000:{t[0]:02x}:{t[1]:02x}.{t[2]}"
)
gbps = st.one_of(st.integers(0, 400), st.sampled_from(["10Gbps", "500 Mbps", "2.5Gbps"]))
memory = st.one_of(st.integers(0, 1 << 20), st.sampled_from(["4GiB", "512MiB", "10GB", "1TiB"]))
page = st.sampled_from(["2MiB", "1GiB", "1G", "2048KiB"])
capabilities = st.lists(
    st.sampled_from(list(HypervisorCapability)).map(str), max_size=4, unique=True
)


@st.composite
def interfaces(draw: st.DrawFn, prefix: str) -> list[dict[str, Any]]:
    count = draw(st.integers(0, 3))
    out = []
    for i in range(count):
        item: dict[str, Any] = {
            "name": f"{prefix}{i}",
            "mode": draw(st.sampled_from(["dedicated", "sriov", "vswitch"])),
        }
        if draw(st.booleans()):
            item["speed_gbps"] = draw(gbps)
        if draw(st.booleans()):
            item["bandwidth_gbps"] = draw(gbps)
        if draw(st.booleans()):
            item["vlan"] = draw(st.integers(0, 4094))
        out.append(item)
    return out


@st.composite
def vmds(draw: st.DrawFn) -> dict[str, Any]:
    doc: dict[str, Any] = {"schema": "nfvplace/vmd/v1", "name": draw(names)}
    if draw(st.booleans()):
        doc["processor"] = {
            "vendor": "GenuineIntel",
            "required_flags": draw(st.lists(names, max_size=3)),
        }
    if draw(st.booleans()):
        doc["hypervisor"] = {
            "type": draw(st.sampled_from(["kvm", "xen", "vmware"])),
            "required_capabilities": draw(capabilities),
            "required_capability_sets": draw(
                st.lists(st.sampled_from(list(CapabilitySet)).map(str), unique=True)
            ),
        }
    next_vcpu = 0
    sets = []
    for set_id in range(draw(st.integers(0, 3))):
        n = draw(st.integers(1, 6))
        vcpus = list(range(next_vcpu, next_vcpu + n))
        next_vcpu += n
        cpu_set: dict[str, Any] = {"id": set_id, "vcpus": vcpus, "memory_mib": draw(memory)}
        pairs = [vcpus[i : i + 2] for i in range(0, n - 1, 2)]
        if pairs and draw(st.booleans()):
            cpu_set["howtogroup"] = pairs
        if draw(st.booleans()):
            cpu_set["hugepages"] = {"size": draw(page), "count": draw(st.integers(0, 64))}
        cpu_set["interfaces"] = draw(interfaces(f"s{set_id}e"))
        sets.append(cpu_set)
    if sets:
        doc["cpu_sets"] = sets
        if len(sets) > 1 and draw(st.booleans()):
            doc["cpu_set_bandwidth"] = [
                {"cpu_sets": [0, 1], "bandwidth_mbps": draw(st.integers(0, 10**5))}
            ]
        if draw(st.booleans()):
            doc["realtime_vcpus"] = draw(
                st.lists(st.integers(0, next_vcpu - 1), max_size=3, unique=True)
            )
    else:
        doc["vcpus"] = draw(st.integers(1, 64))
        doc["memory_mib"] = draw(memory)
        doc["cpu_oversubscription"] = draw(st.booleans())
    doc["interfaces"] = draw(interfaces("top"))
    if draw(st.booleans()):
        doc["impact"] = {
            "max_instances_per_host": draw(st.integers(1, 8)),
            "memory_bandwidth_gbps": draw(gbps),
        }
    if draw(st.booleans()):
        doc["variants"] = [
            {
                "name": "v1",
                "match": {"processor_vendor": "AuthenticAMD"},
                "vcpus": draw(st.integers(1, 8)),
            }
        ]
    if draw(st.booleans()):
        doc["labels"] = draw(st.dictionaries(names, names, max_size=2))
    return doc


@st.composite
def chds(draw: st.DrawFn) -> dict[str, Any]:
    nodes = []
    next_pu = 0
    next_pci = 0
    for node_id in range(draw(st.integers(1, 3))):
        cpus = []
        for _ in range(draw(st.integers(0, 4))):
            smt = draw(st.booleans())
            ids = [next_pu, next_pu + 1] if smt else [next_pu]
            for pu in ids:
                cpu: dict[str, Any] = {"id": pu, "core": ids[0], "siblings": ids}
                state = draw(st.sampled_from(["free", "dedicated", "shared"]))
                cpu["state"] = state
                if state == "dedicated":
                    cpu["owner"] = draw(names)
                if state == "shared":
                    cpu["oversubscription_ratio"] = draw(st.floats(1, 16, allow_nan=False))
                    cpu["usage_ratio"] = draw(st.floats(0, 1, allow_nan=False))
                cpu["eligible"] = draw(st.booleans())
                cpus.append(cpu)
            next_pu += len(ids)
        ports = []
        for _ in range(draw(st.integers(0, 2))):
            next_pci += 1
            vfs = [
                {
                    "pci_address": f"0000:{next_pci:02x}:{1 + v // 8:02x}.{v % 8}",
                    "in_use": draw(st.booleans()),
                }
                for v in range(draw(st.integers(0, 3)))
            ]
            ports.append(
                {
                    "pci_address": f"0000:{next_pci:02x}:00.0",
                    "speed_gbps": draw(gbps),
                    "usage": "sriov",
                    "vfs": vfs,
                }
            )
        node: dict[str, Any] = {
            "id": node_id,
            "cpus": cpus,
            "memory": {
                "total_mib": draw(memory),
                "hugepages": [
                    {
                        "size_kib": 1048576,
                        "total": draw(st.integers(0, 64)),
                        "used": draw(st.integers(0, 8)),
                    }
                ],
                "normal": {"oversubscription_ratio": draw(st.floats(1, 4, allow_nan=False))},
            },
        }
        if ports:
            node["nics"] = [
                {"vendor": "Intel", "model": "E810", "pcie_generation": 4, "ports": ports}
            ]
        nodes.append(node)
    return {
        "schema": "nfvplace/chd/v1",
        "id": draw(names),
        "processor": {
            "vendor": "GenuineIntel",
            "model": draw(
                st.text(
                    st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
                    min_size=1,
                    max_size=20,
                )
            ),
            "flags": draw(st.lists(names, max_size=4)),
            "features": draw(
                st.lists(st.sampled_from(list(ProcessorFeature)).map(str), max_size=3, unique=True)
            ),
        },
        "hypervisor": {"type": "kvm", "capabilities": draw(capabilities)},
        "kernel": {
            "cmdline": draw(
                st.text(
                    st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
                    max_size=30,
                )
            )
        },
        "numa_nodes": nodes,
    }


def _round_trip(
    model: type[VmDescriptor] | type[ComputeHostDescriptor], doc: dict[str, Any]
) -> None:
    value = model.model_validate(doc)
    for fmt in ("yaml", "json"):
        text = dump(value, fmt)
        again = parse_document(parse_text(text))
        assert again == value
        assert dump(again, fmt) == text


@settings(max_examples=60, deadline=None)
@given(vmds())
def test_vmd_round_trips(doc: dict[str, Any]) -> None:
    _round_trip(VmDescriptor, doc)


@settings(max_examples=60, deadline=None)
@given(chds())
def test_chd_round_trips(doc: dict[str, Any]) -> None:
    _round_trip(ComputeHostDescriptor, doc)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=6, unique=True), st.booleans())
def test_configuration_round_trips(pus: list[int], hugepages: bool) -> None:
    doc: dict[str, Any] = {
        "schema": "nfvplace/vm-configuration/v1",
        "vm": "v",
        "host": "h",
        "cpu_sets": [
            {
                "id": 0,
                "numa_node": 0,
                "vcpu_pins": dict(enumerate(pus)),
                "memory_mib": 2048,
                **({"hugepages": {"size_kib": 1048576, "count": 2}} if hugepages else {}),
            }
        ],
    }
    value = VmConfiguration.model_validate(doc)
    for fmt in ("yaml", "json"):
        assert parse_document(parse_text(dump(value, fmt))) == value


@pytest.mark.parametrize(
    "text", ["a\x85b", "\x7f", "\u2028", "\ufeff", "\x1b", "é😀", "'\"", "a: b"]
)
@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_awkward_strings_round_trip(text: str, fmt: str) -> None:
    # (NUL is refused by every string field: see test_nul_is_refused)
    vm = VmDescriptor.model_validate(
        {"schema": "nfvplace/vmd/v1", "name": "x", "vcpus": 1, "memory_mib": 1, "description": text}
    )
    assert parse_document(parse_text(dump(vm, fmt))) == vm


def test_nul_is_refused() -> None:
    with pytest.raises(ValidationError, match="String should match pattern"):
        VmDescriptor.model_validate(
            {
                "schema": "nfvplace/vmd/v1",
                "name": "x",
                "vcpus": 1,
                "memory_mib": 1,
                "description": "a\x00",
            }
        )
