"""Property: any valid VM Configuration renders to a domain whose pins, nodesets, page sizes and
PCI addresses parse back equal to the configuration's (and, for a sample, to a schema-valid one)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nfvplace.models import VmConfiguration
from nfvplace.render import render, render_libvirt

from ._support import assert_domain_matches, libvirt_define, parse_domain, virt_xml_validate


@st.composite
def configurations(draw: st.DrawFn) -> VmConfiguration:
    set_count = draw(st.integers(0, 4))
    nodes = draw(st.permutations(range(4)))[:set_count]
    sizes = [draw(st.integers(1, 6)) for _ in range(set_count)]
    ids = draw(st.permutations(range(8)))[:set_count]
    shared_count = draw(st.integers(0 if set_count else 1, 3))
    total = sum(sizes) + shared_count
    vcpu_ids = list(draw(st.permutations(range(total))))
    pus = iter(draw(st.permutations(range(160))))
    cpu_sets: list[dict[str, Any]] = []
    for set_id, node, size in zip(ids, nodes, sizes, strict=True):
        vcpus = sorted(vcpu_ids[:size])
        vcpu_ids = vcpu_ids[size:]
        memory_mib = draw(st.integers(1, 8)) * 1024
        cpu_set: dict[str, Any] = {
            "id": set_id,
            "numa_node": node,
            "vcpu_pins": {v: next(pus) for v in vcpus},
            "memory_mib": memory_mib,
        }
        size_kib = draw(st.sampled_from([None, 2048, 1048576]))
        if size_kib is not None:
            most = memory_mib * 1024 // size_kib
            cpu_set["hugepages"] = {"size_kib": size_kib, "count": draw(st.integers(0, most))}
        if draw(st.booleans()):
            cpu_set["howtogroup"] = [vcpus[i : i + 2] for i in range(0, len(vcpus) - 1, 2)]
        cpu_sets.append(cpu_set)
    data: dict[str, Any] = {"vm": "prop-vm", "host": "h", "vcpus": total, "cpu_sets": cpu_sets}
    if shared_count:
        shared: dict[str, Any] = {
            "vcpus": shared_count,
            "cpus": sorted({next(pus) for _ in range(draw(st.integers(1, 4)))}),
        }
        if draw(st.booleans()):
            shared["numa_node"] = draw(st.integers(0, 3))
            shared["memory_mib"] = draw(st.integers(0, 2)) * 512
        data["shared"] = shared
    if not cpu_sets:
        data["memory_mib"] = draw(st.integers(1, 8)) * 512
    if draw(st.booleans()):
        data["realtime_vcpus"] = sorted(draw(st.sets(st.integers(0, total - 1), min_size=1)))
    if draw(st.booleans()):
        data["emulator_pins"] = [next(pus)]
    interfaces = []
    for n in range(draw(st.integers(0, 4))):
        mode = draw(st.sampled_from(["dedicated", "sriov", "vswitch"]))
        iface: dict[str, Any] = {"name": f"if{n}", "mode": mode}
        if mode != "vswitch":
            iface["pci_address"] = f"0000:{0x18 + n:02x}:{draw(st.integers(0, 31)):02x}.{n % 8}"
        else:
            iface["vhost_user"] = draw(st.booleans())
        interfaces.append(iface)
    data["interfaces"] = interfaces
    return VmConfiguration.model_validate(data)


@settings(max_examples=150, deadline=None)
@given(configurations())
def test_rendered_domain_parses_back_to_the_configuration(config: VmConfiguration) -> None:
    before = config.model_dump()
    result = render_libvirt(config)
    assert config.model_dump() == before
    assert_domain_matches(parse_domain(result.text), config)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configurations())
def test_rendered_domain_is_valid_for_libvirt(config: VmConfiguration) -> None:
    text = render_libvirt(config).text
    with tempfile.TemporaryDirectory() as folder:
        virt_xml_validate(text, Path(folder))
        assert_domain_matches(parse_domain(libvirt_define(text, Path(folder))), config)


@settings(max_examples=100, deadline=None)
@given(configurations(), st.sampled_from(["openstack", "vmx", "host-tuning"]))
def test_every_target_renders_any_valid_configuration(config: VmConfiguration, fmt: str) -> None:
    before = config.model_dump()
    result = render(config, fmt)
    assert config.model_dump() == before
    assert result.text.strip()
    assert all(isinstance(w, str) and w for w in result.warnings)
