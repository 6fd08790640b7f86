"""`chd.to_networkx()`: the topology as a graph."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import networkx as nx
from hwloc_corpus import corpus_file

from nfvplace.discovery import chd_from_hwloc_xml

ROOT = Path(__file__).resolve().parents[1]


def test_graph_of_many_vfs_machine() -> None:
    chd = chd_from_hwloc_xml(corpus_file("16intel64-manyVFs.xml"))
    graph = chd.to_networkx()
    kinds = Counter(data["kind"] for _, data in graph.nodes(data=True))
    assert kinds == {
        "machine": 1,
        "package": 2,
        "numa": 2,
        "core": 16,
        "pu": 16,
        "nic": 5,
        "port": 6,
        "vf": 12,
    }
    assert nx.is_connected(graph)
    assert graph.has_edge("numa:1", "nic:0000:88:00.0")
    assert graph.has_edge("port:0000:88:00.0", "vf:0000:88:00.5")
    assert graph.has_edge("core:0", "pu:0")


def test_graph_has_numa_distances() -> None:
    chd = chd_from_hwloc_xml(corpus_file("32em64t-2n8c2t-pci-normalio.xml"))
    graph = chd.to_networkx()
    edge = graph.edges["numa:0", "numa:1"]
    assert edge == {"relation": "distance", "distance": 20}
    # proximity: the NIC on node 1 is two hops from PU 8's core via node 1
    assert nx.shortest_path_length(graph, "pu:8", "nic:0000:81:00.0") == 3


def test_graph_marks_ineligible_pus() -> None:
    chd = chd_from_hwloc_xml(corpus_file("64intel64-3g2n+2n-irregulargroups+pci.xml"))
    graph = chd.to_networkx()
    eligible = [n for n, d in graph.nodes(data=True) if d["kind"] == "pu" and d["eligible"]]
    assert len(eligible) == 16
