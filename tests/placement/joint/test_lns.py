"""Local search on joint placements: consolidation never uses more hosts, and claims stay exact."""

from __future__ import annotations

import random
import time

import pytest
from builders import NodeSpec, cpu_set, host, vm

import nfvplace
from nfvplace.claims import claim
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.placement.joint import place as joint_place
from nfvplace.placement.joint.batch import of_batch
from nfvplace.placement.joint.lns import consolidate
from nfvplace.placement.joint.search import JointSearch
from nfvplace.placement.options import Options


def _canonical(h: ComputeHostDescriptor) -> ComputeHostDescriptor:
    return h.model_copy(update={"instances": tuple(sorted(h.instances, key=lambda i: i.id))})


@pytest.mark.parametrize("seed", range(8))
def test_consolidation_uses_no_more_hosts_and_claims_exactly(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    hosts = [
        host(f"h{i}", nodes=[NodeSpec(cores=rng.choice((4, 6, 8))) for _ in range(2)])
        for i in range(6)
    ]
    vms = [vm(f"v{k}", [cpu_set(0, rng.choice((1, 2, 4, 6)))]) for k in range(rng.randint(4, 10))]
    monkeypatch.setattr(joint_place, "CONSOLIDATE_SHARE", 0.0)
    plain = nfvplace.place(hosts, vms)
    monkeypatch.setattr(joint_place, "CONSOLIDATE_SHARE", 0.25)
    packed = nfvplace.place(hosts, vms)
    assert plain.ok == packed.ok
    assert len(packed.hosts) <= len(plain.hosts)
    current = {h.id: h for h in hosts}
    for config in packed.configurations:
        current[config.host] = claim(current[config.host], config)
    assert {k: _canonical(current[k]) for k in packed.hosts} == {
        k: _canonical(h) for k, h in packed.hosts.items()
    }


def test_consolidation_empties_a_host_onto_the_others() -> None:
    # two 2-core VMs placed on two 8-core hosts (as a search might leave them): one host is emptied
    hosts = [host("a", nodes=[NodeSpec(cores=8)]), host("b", nodes=[NodeSpec(cores=8)])]
    group = of_batch([vm("x", [cpu_set(0, 4)]), vm("y", [cpu_set(0, 4)])])
    search = JointSearch(FleetIndex(hosts), group, Options(), 5.0)
    for u, h in ((0, 0), (1, 1)):
        (fit,) = list(search.candidates(u, within=[h]))
        assert search.state.place(u, h, fit.configuration, fit.host)
    assert consolidate(search, time.monotonic() + 5.0) == 1
    assert len(search.state.on_host) == 1
    (used,) = search.state.on_host
    assert sorted(search.state.on_host[used]) == [0, 1]
