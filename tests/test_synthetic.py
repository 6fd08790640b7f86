"""The realistic-use transform and the examples it generates (examples/hosts, examples/fleet)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from hwloc_corpus import corpus_file

from nfvplace import load
from nfvplace.discovery import chd_from_hwloc_xml
from nfvplace.models import ComputeHostDescriptor
from nfvplace.models.chd import CpuState, PortUsage
from nfvplace.synthetic import realistic_host

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def corpus() -> Path:
    return corpus_file("README.md").parent


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_hosts", EXAMPLES / "generate_hosts.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_examples_are_in_sync_with_the_generator(tmp_path: Path) -> None:
    written = generator().generate(corpus(), tmp_path)
    assert len(written) >= 13
    for path in written:
        committed = EXAMPLES / path.relative_to(tmp_path)
        assert committed.is_file(), f"{committed} missing: run examples/generate_hosts.py"
        assert committed.read_text() == path.read_text(), f"{committed} is stale"


@pytest.mark.parametrize("folder", ["hosts", "fleet"])
def test_every_example_is_a_valid_realistic_chd(folder: str) -> None:
    hosts = load(EXAMPLES / folder)
    assert isinstance(hosts, list)
    assert len(hosts) >= (3 if folder == "hosts" else 8)
    for chd in hosts:
        assert isinstance(chd, ComputeHostDescriptor)
        assert chd.hypervisor is not None
        assert chd.hypervisor.capabilities
        assert chd.processor.flags
        assert any(not c.eligible for c in chd.cpus)
        assert any(c.state == CpuState.dedicated and c.owner for c in chd.cpus)
        for node in chd.numa_nodes:
            sizes = {p.size_kib for p in node.memory.hugepages}
            assert {2048, 1048576} <= sizes
            assert node.memory.hugepage_mib < node.memory.total_mib
            assert all(p.used <= p.total for p in node.memory.hugepages)
            for port in node.ports:
                assert port.speed_gbps > 0
                if port.usage == PortUsage.sriov:
                    assert port.vfs
                    assert any(vf.in_use for vf in port.vfs)
        addresses = [
            a
            for node in chd.numa_nodes
            for port in node.ports
            for a in (port.pci_address, *(vf.pci_address for vf in port.vfs))
        ]
        assert len(addresses) == len(set(addresses))


def test_transform_is_deterministic_and_leaves_its_input_alone() -> None:
    source = chd_from_hwloc_xml(corpus() / "32em64t-2n8c2t-pci-normalio.xml")
    before = source.model_dump()
    one = realistic_host(source, "h1", seed=7)
    assert realistic_host(source, "h1", seed=7) == one
    assert source.model_dump() == before
    assert one.id == "h1"
    # disallowed PUs of a cgroup-restricted export stay ineligible
    restricted = chd_from_hwloc_xml(corpus() / "64intel64-3g2n+2n-irregulargroups+pci.xml")
    out = realistic_host(restricted, "h2")
    assert all(not c.eligible for c in out.cpus if c.id >= 16)
