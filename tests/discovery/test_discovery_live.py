"""Live discovery on this machine (a real Linux VM): structure, not numbers."""

from __future__ import annotations

import os
from pathlib import Path

from nfvplace import load
from nfvplace.discovery import discover_live
from nfvplace.models import dump


def test_live_discovery_smoke(tmp_path: Path) -> None:
    chd = discover_live(host_id="this-host")
    assert chd.id == "this-host"
    assert chd.provenance is not None
    assert chd.provenance.source == "live"
    assert "pyhwloc" in (chd.provenance.tool or "")  # hwloc ran (in its child process)
    cpus = chd.cpus
    assert len(cpus) == len({c.id for c in cpus}) >= 1
    assert len(cpus) >= (os.cpu_count() or 1) or any(not c.eligible for c in cpus)
    for cpu in cpus:
        assert cpu.id in cpu.siblings
    assert all(node.memory.total_mib > 0 for node in chd.numa_nodes if node.cpus)
    assert chd.processor.vendor != "unknown"
    assert chd.processor.flags
    assert chd.kernel is not None
    assert chd.kernel.version
    assert chd.kernel.cmdline is not None
    assert (chd.hypervisor is not None) == Path("/dev/kvm").exists()
    if chd.hypervisor is None:
        assert "hypervisor" in chd.provenance.unknown
    # a PCI NIC the kernel shows is in the CHD, on some node
    pci_netdevs = {
        p.name for p in Path("/sys/class/net").iterdir() if (p / "device/vendor").exists()
    }
    ports = {port.name for node in chd.numa_nodes for port in node.ports}
    assert pci_netdevs <= ports
    out = tmp_path / "live.yaml"
    out.write_text(dump(chd), encoding="utf-8")
    assert load(out) == chd
