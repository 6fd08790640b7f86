"""The shared-CPU kind: floating vCPUs of oversubscribed plain VMs over the shared PUs of one node,
within each PU's ratio, never overcommitting a VM against itself; claimed and released as usage."""

from __future__ import annotations

import pytest
from builders import NodeSpec, host, vm

import nfvplace
from nfvplace.claims import claim, release


def test_oversubscribed_cloud_vm_uses_shared_pus_within_ratio() -> None:
    h = host(shared={4: (4.0, 0.5), 5: (4.0, 0.75)})
    v = vm(vcpus=2, memory_mib=1024, cpu_oversubscription=True)
    result = nfvplace.place([h], v)
    config = result.configuration
    assert config.shared is not None
    assert config.cpu_sets == ()
    assert config.shared.cpus == (4, 5)  # one PU per vCPU at least
    updated = result.hosts[h.id]
    for cpu in updated.cpus:
        if cpu.id in config.shared.cpus:
            assert (cpu.usage_ratio or 0) <= 1.0


@pytest.mark.parametrize(
    ("vcpus", "reason", "numbers"),
    [
        # PU 5 has room for 0.4 vCPUs: two vCPUs never share PU 4 (no self-overcommit)
        (2, "shared_cpu", None),
        # two shared PUs for three vCPUs: the VM would overcommit against itself
        (3, "shared_pus", (2, 3)),
    ],
)
def test_a_shared_vm_never_overcommits_against_itself(
    vcpus: int, reason: str, numbers: tuple[int, int] | None
) -> None:
    h = host(shared={4: (4.0, 0.5), 5: (4.0, 0.9)})
    result = nfvplace.place([h], vm(vcpus=vcpus, memory_mib=1024, cpu_oversubscription=True))
    assert not result.ok
    assert result.diagnosis is not None
    rejection = result.diagnosis.rejections[0]
    assert rejection.reason == reason
    if numbers is not None:
        assert (rejection.available, rejection.requested) == numbers


def test_pinned_vm_never_gets_shared_pus() -> None:
    h = host(nodes=[NodeSpec(cores=1), NodeSpec(cores=0)], shared={0: (4.0, 0.0), 1: (4.0, 0.0)})
    result = nfvplace.place([h], vm(vcpus=1, memory_mib=512))
    assert not result.ok


def test_release_gives_the_shared_usage_back() -> None:
    h = host(shared={4: (4.0, 0.5), 5: (4.0, 0.75)})
    result = nfvplace.place([h], vm(vcpus=2, memory_mib=1024, cpu_oversubscription=True))
    config = result.configuration
    assert config.shared is not None
    claimed = claim(h, config)
    usage = {c.id: c.usage_ratio for c in claimed.cpus if c.id in config.shared.cpus}
    assert usage != {c.id: c.usage_ratio for c in h.cpus if c.id in config.shared.cpus}
    assert release(claimed, config) == h
