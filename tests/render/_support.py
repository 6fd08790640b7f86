from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

import nfvplace
from nfvplace.models import ComputeHostDescriptor, VmConfiguration, VmDescriptor
from nfvplace.render._common import parse_cpu_list

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
ROOT = HERE.parents[1]
FIGURE8_VMD = ROOT / "examples" / "vms" / "nfv-per-001-figure8.yaml"

# case name -> (configuration file, VM Descriptor file or None)
CASES: dict[str, tuple[Path, Path | None]] = {
    "figure8": (FIXTURES / "figure8.config.yaml", FIGURE8_VMD),
    "vran-du": (FIXTURES / "vran-du.config.yaml", FIXTURES / "vran-du.vmd.yaml"),
    "vhost-user": (FIXTURES / "vhost-user.config.yaml", None),
    "plain": (FIXTURES / "plain.config.yaml", None),
}


def load_config(case: str) -> VmConfiguration:
    config = nfvplace.load(CASES[case][0])
    assert isinstance(config, VmConfiguration)
    return config


def load_vm(case: str) -> VmDescriptor | None:
    path = CASES[case][1]
    if path is None:
        return None
    vm = nfvplace.load(path)
    assert isinstance(vm, VmDescriptor)
    return vm


def load_host() -> ComputeHostDescriptor:
    host = nfvplace.load(FIXTURES / "compute-07.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    return host


def virt_xml_validate(xml: str, tmp_path: Path, name: str = "domain.xml") -> None:
    """Validate a domain XML against libvirt's own RelaxNG schemas; fail (never skip) without them."""
    tool = shutil.which("virt-xml-validate")
    if tool is None or shutil.which("xmllint") is None:
        pytest.fail(
            "virt-xml-validate (Debian package libvirt-clients) and xmllint (libxml2-utils) are "
            "needed to check rendered domain XML: apt-get install -y libvirt-clients libxml2-utils"
        )
    path = tmp_path / name
    path.write_text(xml, encoding="utf-8")
    proc = subprocess.run(
        [tool, str(path), "domain"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, f"{name} fails libvirt's schema:\n{proc.stdout}\n{proc.stderr}"


def libvirt_define(xml: str, tmp_path: Path, name: str = "domain.xml") -> str:
    """Define the domain in libvirt's test driver (libvirt's own parser and semantic checks, no
    hypervisor needed) and return the XML libvirt writes back; fail (never skip) without virsh."""
    tool = shutil.which("virsh")
    if tool is None:
        pytest.fail(
            "virsh (Debian package libvirt-clients) is needed to check rendered domain XML: "
            "apt-get install -y libvirt-clients libxml2-utils"
        )
    path = tmp_path / name
    path.write_text(xml, encoding="utf-8")
    domain = etree.fromstring(xml.encode("utf-8")).findtext("name") or ""
    proc = subprocess.run(
        [tool, "-q", "-c", "test:///default", f"define {path}; dumpxml --inactive {domain}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, f"libvirt refuses {name}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def parse_domain(xml: str) -> dict[str, Any]:
    """Read back what the tests compare with the VM Configuration."""
    root = etree.fromstring(xml.encode("utf-8"))

    def pci(address: etree._Element) -> str:
        return (
            f"{int(address.get('domain', '0'), 16):04x}:{int(address.get('bus', '0'), 16):02x}:"
            f"{int(address.get('slot', '0'), 16):02x}.{int(address.get('function', '0'), 16):x}"
        )

    cells = {
        int(c.get("id", "-1")): {
            "cpus": set(parse_cpu_list(c.get("cpus", ""))),
            "memory_kib": int(c.get("memory", "0")),
            "mem_access": c.get("memAccess"),
        }
        for c in root.iterfind("cpu/numa/cell")
    }
    topology = root.find("cpu/topology")
    emulator = root.find("cputune/emulatorpin")
    return {
        "vcpus": int(root.findtext("vcpu") or 0),
        "vcpu_placement": root.find("vcpu").get("placement")
        if root.find("vcpu") is not None
        else None,  # type: ignore[union-attr]
        "memory_kib": int(root.findtext("memory") or 0),
        "pins": {
            int(p.get("vcpu", "-1")): set(parse_cpu_list(p.get("cpuset", "")))
            for p in root.iterfind("cputune/vcpupin")
        },
        "emulatorpin": set(parse_cpu_list(emulator.get("cpuset", "")))
        if emulator is not None
        else None,
        "vcpusched": {
            vcpu: (s.get("scheduler"), s.get("priority"))
            for s in root.iterfind("cputune/vcpusched")
            for vcpu in parse_cpu_list(s.get("vcpus", ""))
        },
        "memnodes": {
            int(m.get("cellid", "-1")): (m.get("mode"), set(parse_cpu_list(m.get("nodeset", ""))))
            for m in root.iterfind("numatune/memnode")
        },
        "numatune_memory": root.find("numatune/memory"),
        "pages": {
            int(p.get("size", "0")): set(parse_cpu_list(p.get("nodeset", "")))
            for p in root.iterfind("memoryBacking/hugepages/page")
        },
        "locked": root.find("memoryBacking/locked") is not None,
        "nosharepages": root.find("memoryBacking/nosharepages") is not None,
        "shared_access": root.find("memoryBacking/access[@mode='shared']") is not None,
        "cells": cells,
        "threads": int(topology.get("threads", "0")) if topology is not None else None,
        "topology_vcpus": (
            int(topology.get("sockets", "0"))
            * int(topology.get("dies", "1"))
            * int(topology.get("cores", "0"))
            * int(topology.get("threads", "0"))
            if topology is not None
            else None
        ),
        "hostdevs": [pci(a) for a in root.iterfind("devices/hostdev/source/address")],
        "vf_interfaces": [
            pci(a) for a in root.iterfind("devices/interface[@type='hostdev']/source/address")
        ],
        "vhostuser": len(root.findall("devices/interface[@type='vhostuser']")),
        "network_interfaces": len(root.findall("devices/interface[@type='network']")),
    }


def assert_domain_matches(parsed: dict[str, Any], config: VmConfiguration) -> None:
    """Pins, nodesets, page sizes and PCI addresses of the XML equal the configuration's."""
    pins = {v: pu for cs in config.cpu_sets for v, pu in cs.vcpu_pins.items()}
    shared = config.shared
    total = (
        config.vcpus if config.vcpus is not None else len(pins) + (shared.vcpus if shared else 0)
    )
    assert parsed["vcpus"] == total
    assert parsed["vcpu_placement"] == "static"
    if pins or (shared and shared.cpus):
        expected = {
            v: ({pins[v]} if v in pins else set(shared.cpus if shared else ()))
            for v in range(total)
            if v in pins or (shared and shared.cpus)
        }
        assert parsed["pins"] == expected
    else:
        assert parsed["pins"] == {}
    if config.emulator_pins:
        assert parsed["emulatorpin"] == set(config.emulator_pins)
    # guest cell i is the i-th cpu-set by id; memory-only cells follow on the same host nodes
    ordered = sorted(config.cpu_sets, key=lambda cs: cs.id)
    cells = parsed["cells"]
    memory_per_node: dict[int, int] = {}
    for cell_id, (mode, nodeset) in parsed["memnodes"].items():
        assert mode == "strict"
        (node,) = nodeset
        memory_per_node[node] = memory_per_node.get(node, 0) + cells[cell_id]["memory_kib"]
    for index, cs in enumerate(ordered):
        assert set(cs.vcpu_pins) <= cells[index]["cpus"]
        assert parsed["memnodes"][index] == ("strict", {cs.numa_node})
        if cs.hugepages and cs.hugepages.count:
            assert index in parsed["pages"][cs.hugepages.size_kib]
            assert cells[index]["memory_kib"] == cs.hugepages.count * cs.hugepages.size_kib
        else:
            assert all(index not in nodeset for nodeset in parsed["pages"].values())
    expected_per_node: dict[int, int] = {}
    for cs in ordered:
        expected_per_node[cs.numa_node] = (
            expected_per_node.get(cs.numa_node, 0) + cs.memory_mib * 1024
        )
    if shared and shared.numa_node is not None and shared.memory_mib and ordered:
        node = shared.numa_node
        expected_per_node[node] = expected_per_node.get(node, 0) + shared.memory_mib * 1024
    if ordered:
        assert memory_per_node == expected_per_node
        all_cpus = set().union(*(c["cpus"] for c in cells.values()))
        assert all_cpus == set(range(total))
        assert parsed["memory_kib"] == sum(c["memory_kib"] for c in cells.values())
    dedicated = [
        i.pci_address.lower()
        for i in config.interfaces
        if i.mode.value == "dedicated" and i.pci_address
    ] + [d.pci_address.lower() for d in config.pci_devices]
    vfs = [
        i.pci_address.lower()
        for i in config.interfaces
        if i.mode.value == "sriov" and i.pci_address
    ]
    assert parsed["hostdevs"] == dedicated
    assert parsed["vf_interfaces"] == vfs
    vswitch = [i for i in config.interfaces if i.mode.value == "vswitch"]
    assert parsed["vhostuser"] == sum(1 for i in vswitch if i.vhost_user)
    assert parsed["network_interfaces"] == sum(1 for i in vswitch if not i.vhost_user)
    if any(i.vhost_user for i in vswitch):
        assert parsed["shared_access"]
        assert all(c["mem_access"] == "shared" for c in cells.values())
    realtime = bool(config.realtime_vcpus)
    assert parsed["locked"] is realtime
    assert parsed["nosharepages"] is realtime
    if realtime:
        assert parsed["vcpusched"] == dict.fromkeys(config.realtime_vcpus, ("fifo", "1"))
    assert parsed["topology_vcpus"] == total
