"""A host that lints clean still lints clean after claiming the example VM Configuration on it."""

from __future__ import annotations

from pathlib import Path

import nfvplace
from nfvplace.claims import claim, release
from nfvplace.lint import Severity, lint_text
from nfvplace.models import ComputeHostDescriptor, VmConfiguration, dump

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def compute_07() -> ComputeHostDescriptor:
    """2 sockets x 20 cores, SMT (PU n and n + 40 share a core), 1 GiB pages, a NIC on node 1."""
    nodes = []
    for node in (0, 1):
        cpus = []
        for core in range(node * 20, node * 20 + 20):
            pair = [core, core + 40]
            cpus += [
                {"id": pu, "core": core, "siblings": pair, "eligible": core % 20 != 0}
                for pu in pair
            ]
        ports = []
        if node == 1:
            vfs = [{"pci_address": f"0000:af:02.{f}"} for f in range(4)]
            ports = [
                {"pci_address": "0000:af:00.0", "speed_gbps": 10},
                {"pci_address": "0000:af:00.1", "speed_gbps": 10, "usage": "sriov", "vfs": vfs},
            ]
        nodes.append(
            {
                "id": node,
                "cpus": cpus,
                "memory": {"total_mib": 196608, "hugepages": [{"size_kib": 1048576, "total": 32}]},
                "nics": [{"vendor": "Intel", "model": "X710", "ports": ports}] if ports else [],
            }
        )
    return ComputeHostDescriptor.model_validate(
        {
            "schema": "nfvplace/chd/v1",
            "id": "compute-07",
            "processor": {"vendor": "GenuineIntel", "model": "Xeon Gold 6248"},
            "hypervisor": {"type": "kvm", "capabilities": ["cpu_pinning", "hugepage_numa_pinning"]},
            "numa_nodes": nodes,
        }
    )


def _errors_and_warnings(host: ComputeHostDescriptor) -> list[str]:
    findings = lint_text(dump(host), "host.yaml").findings
    return [f"{f.rule} {f.path}: {f.message}" for f in findings if f.severity is not Severity.info]


def test_claim_and_release_keep_the_host_clean() -> None:
    host = compute_07()
    assert _errors_and_warnings(host) == []
    config = nfvplace.load(EXAMPLES / "configurations" / "dataplane-vm-on-compute-07.yaml")
    assert isinstance(config, VmConfiguration)
    claimed = claim(host, config)
    assert claimed != host
    assert _errors_and_warnings(claimed) == []
    assert release(claimed, config) == host
