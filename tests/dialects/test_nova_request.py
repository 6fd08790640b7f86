"""Reading a Nova flavor as Nova means it: PCI NUMA affinity, whole pages, even splits, image
properties merged by Nova's rules, and the resolved PCI requests of a scheduling request."""

from __future__ import annotations

from typing import Any

import pytest

import nfvplace
from nfvplace.dialects import DialectError, convert
from nfvplace.models import ComputeHostDescriptor, VmDescriptor


def _flavor(vcpus: int = 4, ram: int = 4096, **specs: str) -> dict[str, Any]:
    extra = {"hw:cpu_policy": "dedicated", **{k.replace("__", ":"): v for k, v in specs.items()}}
    return {"flavor": {"name": "f", "vcpus": vcpus, "ram": ram, "extra_specs": extra}}


def _vm(document: dict[str, Any]) -> VmDescriptor:
    return VmDescriptor.model_validate(convert(document).data)


def _messages(document: dict[str, Any]) -> list[str]:
    return [note.message for note in convert(document).notes]


@pytest.mark.parametrize("policy", ["required", "legacy", "preferred", "socket", None])
@pytest.mark.parametrize("nodes", ["1", "2"])
def test_pci_alias_keeps_nova_numa_affinity_policy(policy: str | None, nodes: str) -> None:
    specs = {"hw__numa_nodes": nodes, "pci_passthrough__alias": "qat:2"}
    if policy:
        specs["hw__pci_numa_affinity_policy"] = policy
    document = _flavor(**specs)
    (device,) = _vm(document).pci_devices
    # relative to every guest node; Nova's default is legacy
    assert (device.cpu_set, device.numa_affinity, device.count) == (None, policy or "legacy", 2)
    assert not any("PCI" in m for m in _messages(document))


def test_an_image_and_a_port_say_the_pci_numa_affinity_too() -> None:
    image = {"properties": {"hw_pci_numa_affinity_policy": "socket"}}
    (device,) = _vm(_flavor(pci_passthrough__alias="qat:1") | {"image": image}).pci_devices
    assert device.numa_affinity == "socket"
    spec = [{"vendor_id": "8086", "product_id": "0443"}]
    requests = [{"alias_name": "qat", "count": 1, "numa_policy": "preferred", "spec": spec}]
    (device,) = _vm(_flavor() | {"pci_requests": requests}).pci_devices
    assert device.numa_affinity == "preferred"


def test_a_shared_flavor_without_numa_topology_has_no_pci_affinity() -> None:
    document = {
        "flavor": {
            "name": "s",
            "vcpus": 2,
            "ram": 1024,
            "extra_specs": {"pci_passthrough:alias": "qat:1"},
        }
    }
    (device,) = _vm(document).pci_devices
    assert device.numa_affinity is None


def test_a_device_lands_on_the_vms_node() -> None:
    """The one free device is on node 1: the VM goes to node 1, though node 0 has room too."""
    nodes = []
    for node in (0, 1):
        cpus = [
            {"id": 4 * node + k, "core": 4 * node + k, "siblings": [4 * node + k]} for k in range(4)
        ]
        entry: dict[str, Any] = {"id": node, "cpus": cpus, "memory": {"total_mib": 8192}}
        if node == 1:
            entry["pci_devices"] = [
                {"pci_address": "0000:3d:00.0", "class": "other", "vendor": "8086", "model": "0443"}
            ]
        nodes.append(entry)
    host = ComputeHostDescriptor.model_validate(
        {
            "schema": "nfvplace/chd/v1",
            "id": "h",
            "processor": {"vendor": "GenuineIntel", "model": "x"},
            "hypervisor": {"type": "kvm", "capabilities": ["cpu_pinning"]},
            "numa_nodes": nodes,
        }
    )
    document = _flavor(vcpus=2, ram=2048) | {
        "pci_requests": [
            {"alias_name": "qat", "count": 1, "spec": [{"vendor_id": "8086", "product_id": "0443"}]}
        ]
    }
    result = nfvplace.place([host], _vm(document))
    assert result.ok
    configuration = result.configuration
    assert configuration is not None
    assert configuration.cpu_sets[0].numa_node == 1
    assert configuration.pci_devices[0].numa_node == 1


def test_memory_that_is_not_whole_pages_is_an_error_naming_the_key() -> None:
    with pytest.raises(DialectError, match="not a whole number of 1048576 KiB pages") as caught:
        convert(_flavor(ram=1536, hw__mem_page_size="1GB"))
    assert caught.value.path == ("flavor", "extra_specs", "hw:mem_page_size")


@pytest.mark.parametrize("word", ["large", "any"])
def test_large_and_any_are_page_sizes_chosen_on_the_host_node(word: str) -> None:
    document = _flavor(ram=1536, hw__mem_page_size=word)
    (cpu_set,) = _vm(document).cpu_sets
    assert cpu_set.hugepages is not None
    assert (cpu_set.hugepages.size, cpu_set.hugepages.count) == (word, None)
    assert not any("page" in m for m in _messages(document))


def test_large_pages_for_memory_no_large_page_holds_are_refused() -> None:
    with pytest.raises(DialectError, match="not a whole number of 2 MiB pages"):
        convert(_flavor(ram=1025, hw__mem_page_size="large"))


def test_an_uneven_automatic_split_is_refused_as_nova_refuses_it() -> None:
    with pytest.raises(DialectError, match="ImageNUMATopologyAsymmetric") as caught:
        convert(_flavor(vcpus=3, hw__numa_nodes="2"))
    assert caught.value.path == ("flavor", "extra_specs", "hw:numa_nodes")
    even = _vm(
        _flavor(
            vcpus=3,
            hw__numa_nodes="2",
            **{
                "hw__numa_cpus.0": "0",
                "hw__numa_cpus.1": "1,2",
                "hw__numa_mem.0": "1024",
                "hw__numa_mem.1": "3072",
            },
        )
    )
    assert [len(cs.vcpus) for cs in even.cpu_sets] == [1, 2]


@pytest.mark.parametrize("key", ["hw:cpu_thread_policy", "hw:emulator_threads_policy"])
def test_pinning_policies_on_shared_cpus_are_refused(key: str) -> None:
    value = "isolate"
    document = {"flavor": {"name": "s", "vcpus": 2, "ram": 2048, "extra_specs": {key: value}}}
    with pytest.raises(DialectError, match="Nova refuses it on shared CPUs"):
        convert(document)


def test_image_properties_fill_what_the_flavor_leaves_open() -> None:
    document = {
        "flavor": {
            "name": "f",
            "vcpus": 2,
            "ram": 2048,
            "extra_specs": {"hw:mem_page_size": "large"},
        },
        "image": {
            "properties": {
                "hw_cpu_policy": "dedicated",
                "hw_mem_page_size": "2MB",
                "hw_disk_bus": "scsi",
            }
        },
    }
    conversion = convert(document)
    vm = VmDescriptor.model_validate(conversion.data)
    assert vm.cpu_sets[0].hugepages is not None
    assert vm.cpu_sets[0].hugepages.size_kib == 2048
    assert conversion.origins[("cpu_sets", 0, "hugepages")] == (
        "image",
        "properties",
        "hw_mem_page_size",
    )
    assert any("hw_disk_bus" in note.message for note in conversion.notes)


@pytest.mark.parametrize(
    ("specs", "props"),
    [
        ({"hw:cpu_policy": "shared"}, {"hw_cpu_policy": "dedicated"}),
        (
            {"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "isolate"},
            {"hw_cpu_thread_policy": "require"},
        ),
        ({}, {"hw_mem_page_size": "2MB"}),
        ({"hw:mem_page_size": "2MB"}, {"hw_mem_page_size": "2MB"}),
        ({"hw:numa_nodes": "1"}, {"hw_numa_nodes": "1"}),
    ],
)
def test_conflicts_nova_refuses_are_errors(specs: dict[str, str], props: dict[str, str]) -> None:
    document = {
        "flavor": {"name": "f", "vcpus": 2, "ram": 2048, "extra_specs": specs},
        "image": {"properties": props},
    }
    with pytest.raises(DialectError, match="Nova refuses the request") as caught:
        convert(document)
    assert caught.value.path[:2] == ("image", "properties")


@pytest.mark.parametrize(
    ("port_policy", "affinity"), [(None, "legacy"), ("preferred", "preferred")]
)
def test_sriov_port_requests_are_interfaces_near_the_vms_nodes(
    port_policy: str | None, affinity: str
) -> None:
    request: dict[str, Any] = {
        "alias_name": None,
        "count": 1,
        "spec": [{"physical_network": "physnet2", "dev_type": "type-VF"}],
    }
    if port_policy:
        request["numa_policy"] = port_policy  # the Neutron port's numa_affinity_policy
    vm = _vm(_flavor(vcpus=2, ram=2048, hw__numa_nodes="2") | {"pci_requests": [request]})
    (interface,) = vm.interfaces  # relative to every guest node, as Nova's policy is
    assert (interface.mode.value, interface.physical_network) == ("sriov", "physnet2")
    assert interface.numa_affinity == affinity
