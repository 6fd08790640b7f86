"""A CHD's topology as a networkx graph, for notebooks and placement's proximity questions.

Nodes are strings with a `kind` attribute:

| node | kind | attributes |
|---|---|---|
| `machine` | machine | `id` |
| `package:P` | package | `package` |
| `numa:N` | numa | `numa`, `total_mib` |
| `core:C` | core | `core` |
| `pu:I` | pu | `pu`, `eligible`, `state` |
| `nic:<pci of first port>` | nic | `vendor`, `model` |
| `port:<pci>` | port | `pci_address`, `name`, `speed_gbps` |
| `vf:<pci>` | vf | `pci_address`, `in_use` |
| `pci:<pci>` | pci_device | `device_class` |

Containment edges carry `relation="contains"`; NUMA-to-NUMA edges carry `relation="distance"` and
`distance` (the SLIT value) when the CHD has `numa_distances`. Pure: builds a new graph, reads only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import networkx as nx

if TYPE_CHECKING:
    from .models.chd import ComputeHostDescriptor


def chd_graph(chd: ComputeHostDescriptor) -> Any:
    """The topology of `chd` as an undirected `networkx.Graph`."""
    graph = nx.Graph(host=chd.id)
    graph.add_node("machine", kind="machine", id=chd.id)
    for node in chd.numa_nodes:
        numa = f"numa:{node.id}"
        graph.add_node(numa, kind="numa", numa=node.id, total_mib=node.memory.total_mib)
        packages = {cpu.package for cpu in node.cpus if cpu.package is not None}
        if packages:
            for package in sorted(packages):
                pkg = f"package:{package}"
                graph.add_node(pkg, kind="package", package=package)
                graph.add_edge("machine", pkg, relation="contains")
                graph.add_edge(pkg, numa, relation="contains")
        else:
            graph.add_edge("machine", numa, relation="contains")
        for cpu in node.cpus:
            core = f"core:{cpu.core}"
            if core not in graph:
                graph.add_node(core, kind="core", core=cpu.core)
            graph.add_edge(numa, core, relation="contains")
            pu = f"pu:{cpu.id}"
            graph.add_node(pu, kind="pu", pu=cpu.id, eligible=cpu.eligible, state=cpu.state.value)
            graph.add_edge(core, pu, relation="contains")
        for nic in node.nics:
            if not nic.ports:
                continue
            nic_id = f"nic:{nic.ports[0].pci_address.lower()}"
            graph.add_node(nic_id, kind="nic", vendor=nic.vendor, model=nic.model)
            graph.add_edge(numa, nic_id, relation="contains")
            for port in nic.ports:
                port_id = f"port:{port.pci_address.lower()}"
                graph.add_node(
                    port_id,
                    kind="port",
                    pci_address=port.pci_address,
                    name=port.name,
                    speed_gbps=port.speed_gbps,
                )
                graph.add_edge(nic_id, port_id, relation="contains")
                for vf in port.vfs:
                    vf_id = f"vf:{vf.pci_address.lower()}"
                    graph.add_node(vf_id, kind="vf", pci_address=vf.pci_address, in_use=vf.in_use)
                    graph.add_edge(port_id, vf_id, relation="contains")
        for device in node.pci_devices:
            dev_id = f"pci:{device.pci_address.lower()}"
            graph.add_node(dev_id, kind="pci_device", device_class=device.device_class.value)
            graph.add_edge(numa, dev_id, relation="contains")
    if chd.numa_distances is not None:
        ids = [node.id for node in chd.numa_nodes]
        for i, row in enumerate(chd.numa_distances):
            for j, value in enumerate(row):
                if i < j < len(ids):
                    graph.add_edge(
                        f"numa:{ids[i]}", f"numa:{ids[j]}", relation="distance", distance=value
                    )
    return graph
