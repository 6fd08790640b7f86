"""Nova's view of a host as a CHD (`nfvplace.integrations.nova.hosts`), and the plug-ins' imports:
the standard library only, so that `pip install --no-deps nfvplace` works in Nova's environment."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from nfvplace.integrations.nova.hosts import chd_of, host_id
from nfvplace.models import ComputeHostDescriptor

VIEW: dict[str, Any] = {
    "host": "compute 1",
    "nodename": "compute-1.example",
    "cpu_allocation_ratio": 4.0,
    "ram_allocation_ratio": 1.5,
    "cpu_info": json.dumps({"vendor": "Intel", "model": "Skylake", "features": ["aes"]}),
    "cells": [
        {
            "id": 0,
            "cpuset": [1, 5],
            "pcpuset": [2, 3, 6],
            "pinned_cpus": [3],
            "siblings": [[0, 4], [1, 5], [2, 6], [3, 7]],
            "memory": 8192,
            "memory_usage": 1024,
            "cpu_usage": 2,
            "mempages": [
                {"size_kb": 4, "total": 1572864, "used": 262144, "reserved": 0},
                {"size_kb": 1048576, "total": 2, "used": 1, "reserved": 0},
            ],
            "socket": 0,
        },
        {
            "id": 1,
            "cpuset": [8, 9],
            "pcpuset": [8, 9],
            "pinned_cpus": [9],
            "siblings": [[8], [9]],
            "memory": 4096,
            "memory_usage": 0,
            "cpu_usage": 0,
            "mempages": [],
            "socket": 1,
        },
    ],
    "pci_pools": [
        {
            "vendor_id": "8086",
            "product_id": "0443",
            "numa_node": 1,
            "dev_type": "type-PCI",
            "physical_network": None,
            "count": 2,
        },
        {
            "vendor_id": "8086",
            "product_id": "154c",
            "numa_node": 0,
            "dev_type": "type-VF",
            "physical_network": "physnet1",
            "count": 3,
        },
    ],
}


def test_a_nova_host_view_is_a_valid_chd_with_every_state() -> None:
    from nfvplace.integrations.nova.hosts import _cpu_info

    view = {**VIEW, "cpu_info": _cpu_info(VIEW["cpu_info"])}
    chd = ComputeHostDescriptor.model_validate(chd_of(view))
    assert chd.id == host_id(view) == "compute-1.example"
    assert (chd.processor.vendor, chd.processor.flags) == ("GenuineIntel", ("aes",))
    node0, node1 = chd.numa_nodes
    cpus = {c.id: c for c in node0.cpus}
    assert not cpus[0].eligible
    assert not cpus[4].eligible
    assert cpus[1].state.value == "shared"
    assert cpus[1].oversubscription_ratio == 4.0
    assert cpus[1].usage_ratio == 2 / (2 * 4.0)
    assert cpus[2].state.value == "free"
    assert cpus[3].state.value == "dedicated"
    assert cpus[2].siblings == (2, 6)
    assert cpus[2].core == cpus[6].core == 2
    assert node0.memory.hugepages[0].free == 1
    normal = node0.memory.normal  # the 4 KiB pool: 6 GiB, 1 GiB of it used
    assert (node0.memory.normal_total_mib, normal.reserved_mib, normal.used_mib) == (6144, 0, 1024)
    assert node0.ports[0].physical_network == "physnet1"
    assert len(node0.ports[0].vfs) == 3
    legacy = {c.id: c for c in node1.cpus}  # cpuset == pcpuset: vcpu_pin_set
    assert legacy[8].state.value == "free"
    assert legacy[8].oversubscription_ratio == 4.0
    assert legacy[9].state.value == "dedicated"
    assert [(d.vendor, d.model) for d in node1.pci_devices] == [("8086", "0443")] * 2
    assert node1.memory.normal.oversubscription_ratio == 1.5


def test_a_host_without_numa_topology_cannot_pin() -> None:
    view = {"host": "flat", "vcpus_total": 8, "memory_mb": 16384, "cells": [], "pci_pools": []}
    chd = ComputeHostDescriptor.model_validate(chd_of(view))
    assert chd.hypervisor is not None
    assert chd.hypervisor.capabilities == ()
    assert len(chd.numa_nodes[0].cpus) == 8


def test_the_plug_ins_import_nothing_heavy() -> None:
    probe = (
        "import sys, json\n"
        "import nfvplace, nfvplace.integrations.nova\n"
        "import nfvplace.integrations.nova.hosts, nfvplace.integrations.nova.requests\n"
        "import nfvplace.integrations.nova.client\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    heavy = {
        m
        for m in loaded
        if m.split(".")[0] in ("pydantic", "pydantic_core", "numpy", "ortools", "yaml", "httpx")
    }
    assert not heavy, sorted(heavy)


SMT_CELL = {
    "id": 0,
    "cpuset": [0, 1],
    "pcpuset": [2, 3, 4, 5],
    "pinned_cpus": [],
    "siblings": [[0, 1], [2, 3], [4, 5]],
    "memory": 4096,
    "memory_usage": 0,
    "cpu_usage": 0,
    "mempages": [],
    "socket": 0,
}


def _view(**cell: Any) -> dict[str, Any]:
    return {"host": "h", "nodename": "h", "cells": [{**SMT_CELL, **cell}], "pci_pools": []}


def test_isolate_is_refused_where_nova_compute_refuses_it() -> None:
    """Nova bug #1889633: SMT siblings within the cell's sets, cpuset != pcpuset."""
    from nfvplace.integrations.nova.hosts import isolate_refused

    assert isolate_refused(_view()) == {0: [2, 3, 4, 5]}
    # the legacy vcpu_pin_set layout (cpuset == pcpuset) takes isolate on whole SMT cores...
    legacy = list(range(6))
    assert isolate_refused(_view(cpuset=legacy, pcpuset=legacy)) == {}
    # ... not on a core with a thread outside the set, when another core has both
    assert isolate_refused(_view(cpuset=[0, 1, 2, 4], pcpuset=[0, 1, 2, 4])) == {0: [2, 4]}
    # each dedicated thread's sibling left to the host: Nova sees one thread per core
    assert isolate_refused(_view(cpuset=[0], pcpuset=[2, 4])) == {}
    # ... unless a shared core keeps both its threads
    assert isolate_refused(_view(cpuset=[0, 1], pcpuset=[2, 4])) == {0: [2, 4]}
    # worked out once per cell topology: the same answer again, in lists of its own
    again = isolate_refused(_view())
    again[0].append(9)
    assert isolate_refused(_view()) == {0: [2, 3, 4, 5]}


def test_a_closed_cell_offers_no_dedicated_pu_and_siblings_are_novas() -> None:
    closed = ComputeHostDescriptor.model_validate(chd_of(_view(), unpinnable={0: [2, 3, 4, 5]}))
    cpus = {c.id: c for c in closed.numa_nodes[0].cpus}
    assert [pu for pu, c in cpus.items() if c.eligible] == [0, 1]
    emulated = ComputeHostDescriptor.model_validate(chd_of(_view(cpuset=[0], pcpuset=[2, 4])))
    cpus = {c.id: c for c in emulated.numa_nodes[0].cpus}
    assert cpus[2].siblings == (2,)  # its sibling 3 is the host's: Nova takes 2 as a core
    assert not cpus[3].eligible


def test_a_request_pins_isolated_by_the_flavor_or_the_image() -> None:
    from nfvplace.integrations.nova.requests import pins_isolated

    def doc(specs: dict[str, str], props: dict[str, str] | None = None) -> dict[str, Any]:
        return {"flavor": {"extra_specs": specs}, "image": {"properties": props or {}}}

    isolate = {"hw:cpu_thread_policy": "isolate"}
    assert pins_isolated(doc({"hw:cpu_policy": "dedicated", **isolate}))
    assert pins_isolated(doc({"hw:cpu_dedicated_mask": "^0", **isolate}))
    assert pins_isolated(doc({}, {"hw_cpu_policy": "dedicated", "hw_cpu_thread_policy": "isolate"}))
    assert not pins_isolated(doc(isolate))  # shared: the thread policy does not apply
    assert not pins_isolated(doc({"hw:cpu_policy": "dedicated"}))


def test_a_cell_s_cores_are_sorted_once_per_topology_and_each_view_has_its_own() -> None:
    """Siblings as Nova gives them (sets, in any order) are each core's PUs sorted, worked out
    once per topology; each view gets its own lists (a caller may change one view's)."""
    from types import SimpleNamespace

    from nfvplace.integrations.nova import hosts

    cell = SimpleNamespace(
        id=0,
        cpuset={1, 5},
        pcpuset={2, 6},
        pinned_cpus=set(),
        siblings=[{5, 1}, {6, 2}, {4, 0}],
        memory=1024,
        mempages=[],
    )
    state = SimpleNamespace(host="h", numa_topology=SimpleNamespace(cells=[cell]))
    hosts._sorted_cores.cache_clear()
    first, second = (hosts.host_view(state)["cells"][0]["siblings"] for _ in range(2))
    assert first == second == [[1, 5], [2, 6], [0, 4]]
    assert hosts._sorted_cores.cache_info().hits == 1
    first[0].append(9)
    assert second[0] == [1, 5]
    unhashable = ([5, 1], [2, 6])  # not what Nova gives: read, and not kept
    assert hosts._cores(unhashable) == [[1, 5], [2, 6]]


def test_a_host_s_id_and_page_pools_are_read_from_its_inputs_as_its_view_says() -> None:
    """What the pages check reads of a host without its view (`inputs_host_id`, `cell_pages`)
    is what the view gives."""
    from types import SimpleNamespace

    from nfvplace.integrations.nova import hosts

    pages = [SimpleNamespace(size_kb=4, total=9, used=1), SimpleNamespace(size_kb=2048, total=8)]
    cells = [
        SimpleNamespace(id=k, cpuset={k}, siblings=[], memory=64, mempages=pages) for k in (3, 7)
    ]
    for name, nodename in (("h one", None), ("h", "node 1")):
        state = SimpleNamespace(
            host=name, nodename=nodename, numa_topology=SimpleNamespace(cells=cells)
        )
        inputs, view = hosts.host_inputs(state), hosts.host_view(state)
        assert hosts.inputs_host_id(inputs) == hosts.host_id(view)
        assert hosts.cell_pages(inputs) == tuple(
            (c["id"], tuple(tuple(p.values()) for p in c["mempages"])) for c in view["cells"]
        )
