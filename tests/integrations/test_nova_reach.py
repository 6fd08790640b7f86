"""A shared Nova guest without a NUMA topology reaches the whole host (`integrations/nova/reach`):
the door shows the service such a host as one node, so an 8-vCPU shared flavor fits a host whose
nodes have 4 shared CPUs each, as in Nova; a flavor with a guest NUMA topology still sees the
nodes."""

from __future__ import annotations

from typing import Any

from nfvplace import place
from nfvplace.conversion import convert
from nfvplace.integrations.nova.hosts import chd_of
from nfvplace.integrations.nova.reach import floats_host_wide, host_wide
from nfvplace.models import ComputeHostDescriptor, VmDescriptor


def _view() -> dict[str, Any]:
    cells = []
    for n in range(2):
        cpus = list(range(8 * n, 8 * n + 8))
        cells.append(
            {
                "id": n,
                "cpuset": cpus[:4],
                "pcpuset": cpus[4:],
                "pinned_cpus": [],
                "siblings": [],
                "memory": 16384,
                "memory_usage": 0,
                "cpu_usage": 0,
                "mempages": [{"size_kb": 4, "total": 4194304, "used": 0, "reserved": 0}],
                "socket": 0,
            }
        )
    return {"host": "h", "cpu_allocation_ratio": 1.0, "cells": cells, "pci_pools": []}


def _fits(document: dict[str, Any]) -> bool:
    vm = VmDescriptor.model_validate(convert(document, to="nfvplace").data)
    view = host_wide(_view()) if floats_host_wide(document) else _view()
    return place([ComputeHostDescriptor.model_validate(chd_of(view))], vm).ok


def test_a_shared_flavor_without_numa_topology_fits_over_the_whole_hosts_shared_cpus() -> None:
    flavor = {"flavor": {"name": "f", "vcpus": 8, "ram": 4096, "extra_specs": {}}}
    assert _fits(flavor)
    assert not place(
        [ComputeHostDescriptor.model_validate(chd_of(_view()))],
        VmDescriptor.model_validate(convert(flavor, to="nfvplace").data),
    ).ok  # one node's 4 shared CPUs do not hold it: what the door used to answer


def test_a_shared_flavor_with_a_numa_topology_still_needs_one_node() -> None:
    specs = {"hw:numa_nodes": "1"}
    assert not _fits({"flavor": {"name": "f", "vcpus": 8, "ram": 4096, "extra_specs": specs}})
    specs = {"hw:numa_nodes": "1"}
    assert _fits({"flavor": {"name": "f", "vcpus": 4, "ram": 4096, "extra_specs": specs}})
