"""The engine's configurations claim and release cleanly (claims.claim / release / conflicts)."""

from __future__ import annotations

from builders import NodeSpec, PortSpec, cpu_set, host, vm

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.claims import claim, conflicts, release
from nfvplace.placement.resources import draft


def test_claim_release_round_trip() -> None:
    h = host(nodes=[NodeSpec(ports=[PortSpec(usage="sriov", vfs_used=1)]), NodeSpec()])
    iface = {"name": "e", "mode": "sriov", "speed_gbps": 25, "bandwidth_gbps": 5}
    v = vm(
        cpu_sets=[cpu_set(0, 3, hugepages_1g=2, interfaces=(iface,))], emulator_threads="isolate"
    )
    config = nfvplace.place([h], v).configuration
    claimed = claim(h, config)
    assert conflicts(claimed, config)  # everything it holds is taken now
    assert {c.id for c in claimed.cpus if c.owner == config.owner} == set(config.held_cpus)
    released = release(claimed, config)
    assert released.model_dump() == h.model_dump()
    assert release(released, config) == released  # idempotent


def test_claim_rebuilds_only_what_it_touches() -> None:
    h = host(nodes=[NodeSpec(ports=[PortSpec(vfs=4)]), NodeSpec(ports=[PortSpec(vfs=4)])])
    iface = {"name": "e", "mode": "sriov", "speed_gbps": 25, "bandwidth_gbps": 5}
    config = nfvplace.place([h], vm(cpu_sets=[cpu_set(0, 2, interfaces=(iface,))])).configuration
    claimed = claim(h, config)
    # what a validation from plain data gives, field for field
    again = type(h).model_validate(claimed.model_dump(by_alias=True))
    assert again == claimed
    assert again.model_dump() == claimed.model_dump()
    used = next(n for n in claimed.numa_nodes if n.id == config.cpu_sets[0].numa_node)
    other = next(n for n in claimed.numa_nodes if n.id != used.id)
    before = next(n for n in h.numa_nodes if n.id == other.id)
    assert other is before  # a node the claim does not touch is not built (or validated) again
    assert other.nics[0] is before.nics[0]  # untouched parts are shared, not copied
    assert other.memory is before.memory
    held = set(config.held_cpus)
    assert all(
        c is old for c, old in zip(used.cpus, h.node(used.id).cpus, strict=True) if c.id not in held
    )


def test_a_claimed_node_keeps_the_places_of_its_pus_for_the_next_claim() -> None:
    """A claim maps a node's PUs once (their ids are not in a run on most real hosts) and hands
    the map on to the node it built; claims on that node find their PUs by it, and claim just
    as a map made afresh would."""
    fleet = nfvplace.Fleet(make_fleet(30, seed=6))
    handed_on = 0
    for wanted in request_stream(90, seed=7):
        result = fleet.place(wanted)
        for claimed in result.hosts.values():
            handed_on += any(draft.kept_places(node) is not None for node in claimed.numa_nodes)
    assert handed_on > 20
    hosts = fleet.hosts
    again = nfvplace.Fleet(hosts)
    for wanted in request_stream(40, seed=8):
        kept = fleet.place(wanted)
        with draft._places_lock:
            draft._places.clear()
        assert again.place(wanted).hosts == kept.hosts
