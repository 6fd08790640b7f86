"""ETSI SOL001 TOSCA VDUs -> VM Descriptor, and dialect detection overall."""

from __future__ import annotations

from pathlib import Path

import pytest

import nfvplace
from nfvplace.dialects import DIALECT_NAMES, detect
from nfvplace.models import VmDescriptor, VnfTemplate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dialects"


def test_example_sol001() -> None:
    vm = nfvplace.load(EXAMPLES / "sol001-vnfd.yaml")
    assert isinstance(vm, VmDescriptor)
    (cpu_set,) = vm.cpu_sets
    assert cpu_set.vcpus == tuple(range(8))
    assert cpu_set.memory_mib == 16384
    assert cpu_set.hugepages is not None
    assert cpu_set.hugepages.count == 16


def test_two_vdus_and_dynamic_pinning(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        "tosca_definitions_version: tosca_simple_yaml_1_3\n"
        "topology_template:\n  node_templates:\n"
        "    a:\n      type: tosca.nodes.nfv.Vdu.Compute\n      capabilities:\n"
        "        virtual_compute:\n          properties:\n"
        "            virtual_cpu: {num_virtual_cpu: 2}\n"
        "            virtual_memory: {virtual_mem_size: 512 MiB}\n"
        "    b:\n      type: tosca.nodes.nfv.Vdu.Compute\n      capabilities:\n"
        "        virtual_compute:\n          properties:\n"
        "            virtual_cpu: {num_virtual_cpu: 4}\n"
        "            virtual_memory: {virtual_mem_size: 4 GiB}\n"
    )
    template = nfvplace.load(path)
    assert isinstance(template, VnfTemplate)
    sizes = [
        (m.descriptor.vcpus, m.descriptor.memory_mib) for m in template.members if m.descriptor
    ]
    assert sizes == [(2, 512), (4, 4096)]


@pytest.mark.parametrize(
    ("data", "name"),
    [
        ({"tosca_definitions_version": "x"}, "sol001-tosca"),
        ({"vnfd": {"vdu": []}}, "osm-sol006"),
        ({"numas": []}, "openvim"),
        ({"flavor": {"vcpus": 1, "ram": 1}}, "openstack-flavor"),
        ({"schema": "nfvplace/vmd/v1", "numas": []}, None),
        ({"something": "else"}, None),
        ([1, 2], None),
    ],
)
def test_detect(data: object, name: str | None) -> None:
    assert detect(data) == name
    assert name is None or name in DIALECT_NAMES


def test_decimal_memory_units_are_flagged() -> None:
    from nfvplace.lint import lint_text

    text = (
        "tosca_definitions_version: tosca_simple_yaml_1_3\n"
        "topology_template:\n  node_templates:\n"
        "    a:\n      type: tosca.nodes.nfv.Vdu.Compute\n      capabilities:\n"
        "        virtual_compute:\n          properties:\n"
        "            virtual_cpu: {num_virtual_cpu: 2}\n"
        "            virtual_memory:\n              virtual_mem_size: 4 GB\n"
    )
    result = lint_text(text, "t.yaml")
    (note,) = [f for f in result.findings if f.rule == "NFV006"]
    assert note.line == 11
    assert "TOSCA defines GB" in note.message


def test_numa_enabled_without_pinning_is_one_floating_cpu_set(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        "tosca_definitions_version: tosca_simple_yaml_1_3\n"
        "topology_template:\n  node_templates:\n"
        "    a:\n      type: tosca.nodes.nfv.Vdu.Compute\n      capabilities:\n"
        "        virtual_compute:\n          properties:\n"
        "            virtual_cpu: {num_virtual_cpu: 2}\n"
        "            virtual_memory: {virtual_mem_size: 2 GiB, numa_enabled: true}\n"
    )
    vm = nfvplace.load(path)
    assert isinstance(vm, VmDescriptor)
    (cpu_set,) = vm.cpu_sets
    assert (cpu_set.vcpus, cpu_set.memory_mib, cpu_set.floating) == ((0, 1), 2048, True)
