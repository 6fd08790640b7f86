"""The VM Configuration is built once: every kind's part and the descriptor's requirements in one
draft, validated once (`engine/assign.py`)."""

from __future__ import annotations

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from pydantic import BaseModel

from nfvplace.models.vmd import ThreadPolicy
from nfvplace.placement import FleetIndex, place


def test_the_configuration_carries_the_descriptors_requirements_built_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = host(nodes=[NodeSpec(ports=[PortSpec(vfs=4, network="core")]), NodeSpec()])
    iface = {
        "name": "e",
        "mode": "sriov",
        "speed_gbps": 25,
        "bandwidth_gbps": 5,
        "physical_network": "core",
        "vlan": 42,
    }
    v = vm(cpu_sets=[cpu_set(0, 2, pairs=False, interfaces=(iface,), thread_policy="isolate")])

    def copied(*_: object, **__: object) -> None:
        raise AssertionError("the configuration was copied after it was built")

    index = FleetIndex([h])
    monkeypatch.setattr(BaseModel, "model_copy", copied)
    config = place(index, v).configuration
    assert config is not None
    assert config.descriptor is not None
    assert config.descriptor.name == v.name
    assert config.cpu_sets[0].thread_policy is ThreadPolicy.isolate
    (placed,) = config.interfaces
    assert (placed.physical_network, placed.vlan) == ("core", 42)
