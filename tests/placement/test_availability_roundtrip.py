"""The engine's configurations claim and release cleanly (availability.claim / release / conflicts)."""

from __future__ import annotations

from builders import NodeSpec, PortSpec, cpu_set, host, vm

import nfvplace
from nfvplace.availability import claim, conflicts, release


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
