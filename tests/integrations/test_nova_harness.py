"""Nova's own functional harness (real API, conductor, scheduler, Placement, nova-compute with the
libvirt driver on fake libvirt NUMA hosts) boots a flavor through NfvplaceFilter against a real
`nfvplace serve` (bench/nova_loop.py, bench/nova_harness.py)."""

from __future__ import annotations

import pytest

from bench import nova_loop

pytestmark = pytest.mark.slow

SMT_HOST = {
    "name": "compute1",
    "nodes": 2,
    "cores": 4,
    "threads": 2,
    "memory_mib": 8192,
    "pages": {"2048": 1024},
    "cpu_dedicated_set": "2-7,10-15",
    "cpu_shared_set": "0,1,8,9",
}


def test_a_pinned_hugepage_flavor_boots_through_nfvplace_filter() -> None:
    flavor = {
        "name": "pinned",
        "vcpus": 2,
        "ram": 1024,
        "extra_specs": {"hw:cpu_policy": "dedicated", "hw:mem_page_size": "2MB"},
    }
    result = nova_loop.boot([SMT_HOST], flavor)
    assert result["status"] == "ACTIVE", result["fault"]
    assert result["host"] == "compute1"
    (cell,) = result["numa_topology"]["cells"]
    assert cell["pagesize"] == 2048
    pinned = set(cell["cpu_pinning"].values())
    assert len(pinned) == 2
    assert pinned <= set(range(2, 8)) | set(range(10, 16))
    assert '<vcpupin vcpu="0"' in result["domain_xml"]
    (verdict,) = result["verdicts"]
    assert verdict["nfvplace"]["passing"] == ["compute1"] == verdict["passed"]
    assert result["claims_refused"] == []
