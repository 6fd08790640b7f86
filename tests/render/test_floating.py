"""Floating cpu-sets, page sizes chosen on the node and PCI NUMA affinity in the renderers."""

from __future__ import annotations

from typing import Any

import yaml
from lxml import etree

from nfvplace.models import VmConfiguration, VmDescriptor
from nfvplace.render import render_libvirt, render_openstack, render_vmx
from nfvplace.render.host_tuning import render_host_tuning


def _config() -> VmConfiguration:
    return VmConfiguration.model_validate(
        {
            "schema": "nfvplace/vm-configuration/v1",
            "vm": "fl",
            "host": "h",
            "cpu_sets": [
                {
                    "id": 0,
                    "numa_node": 1,
                    "vcpu_pins": {},
                    "memory_mib": 2048,
                    "hugepages": {"size_kib": 1048576, "count": 2},
                    "floating": {"vcpus": [0, 1], "cpus": [4, 5, 12]},
                },
                {
                    "id": 1,
                    "numa_node": 0,
                    "vcpu_pins": {},
                    "memory_mib": 1024,
                    "floating": {"vcpus": [2], "cpus": [0, 8]},
                },
            ],
        }
    )


def _vm(**extra: Any) -> VmDescriptor:
    sets = [
        {"id": 0, "vcpus": [0, 1], "memory_mib": 2048, "floating": True},
        {"id": 1, "vcpus": [2], "memory_mib": 1024, "floating": True},
    ]
    return VmDescriptor.model_validate(
        {"schema": "nfvplace/vmd/v1", "name": "fl", "cpu_oversubscription": True, "cpu_sets": sets}
        | extra
    )


def test_libvirt_floats_each_vcpu_on_its_cells_node() -> None:
    root = etree.fromstring(render_libvirt(_config()).text.encode())
    pins = {e.get("vcpu"): e.get("cpuset") for e in root.iter("vcpupin")}
    assert pins == {"0": "4-5,12", "1": "4-5,12", "2": "0,8"}
    cells = {c.get("id"): c.get("cpus") for c in root.iter("cell")}
    assert cells == {"0": "0-1", "1": "2"}
    memnodes = {m.get("cellid"): m.get("nodeset") for m in root.iter("memnode")}
    assert memnodes == {"0": "1", "1": "0"}
    assert [p.get("size") for p in root.iter("page")] == ["1048576"]


def test_openstack_writes_a_shared_flavor_with_a_numa_topology() -> None:
    vm = _vm()
    data = vm.model_dump(mode="json", by_alias=True)
    for cs in data["cpu_sets"]:
        cs["hugepages"] = {"size": "large"}
    vm = VmDescriptor.model_validate(data)
    specs = yaml.safe_load(render_openstack(_config(), vm).text)["flavor"]["extra_specs"]
    assert specs["hw:cpu_policy"] == "shared"
    assert "hw:cpu_thread_policy" not in specs
    assert (specs["hw:numa_nodes"], specs["hw:numa_cpus.1"]) == ("2", "2")
    assert specs["hw:mem_page_size"] == "large"


def test_openstack_keeps_the_devices_pci_numa_affinity() -> None:
    vm = _vm(pci_devices=[{"class": "crypto", "numa_affinity": "socket"}])
    specs = yaml.safe_load(render_openstack(_config(), vm).text)["flavor"]["extra_specs"]
    assert specs["hw:pci_numa_affinity_policy"] == "socket"


def test_openstack_gives_a_port_its_numa_affinity_policy() -> None:
    vm = _vm(interfaces=[{"name": "e0", "mode": "sriov", "numa_affinity": "preferred"}])
    (port,) = yaml.safe_load(render_openstack(_config(), vm).text)["ports"]
    assert port["numa_affinity_policy"] == "preferred"


def test_vmware_gives_floating_vcpus_their_node_set() -> None:
    text = render_vmx(_config()).text
    assert 'sched.vcpu2.affinity = "0,8"' in text


def test_host_tuning_keeps_floating_pus_out_of_isolcpus() -> None:
    from nfvplace.models import ComputeHostDescriptor

    cpus = [
        {"id": k, "core": k % 8, "siblings": [k % 8, k % 8 + 8], "eligible": k not in (3, 11)}
        for k in range(16)
    ]
    host = ComputeHostDescriptor.model_validate(
        {
            "schema": "nfvplace/chd/v1",
            "id": "h",
            "processor": {"vendor": "GenuineIntel", "model": "x"},
            "numa_nodes": [
                {
                    "id": 0,
                    "cpus": [c for c in cpus if c["core"] < 4],
                    "memory": {"total_mib": 8192},
                },
                {
                    "id": 1,
                    "cpus": [c for c in cpus if c["core"] >= 4],
                    "memory": {"total_mib": 8192},
                },
            ],
        }
    )
    text = render_host_tuning([_config()], host).text
    (cmdline,) = [line for line in text.splitlines() if line.startswith("NFVPLACE_KERNEL_CMDLINE")]
    isolcpus = next(w for w in cmdline.split('"')[1].split() if w.startswith("isolcpus="))
    assert isolcpus == "isolcpus=1-2,6-7,9-10,13-15"  # every eligible PU but the floating ones
