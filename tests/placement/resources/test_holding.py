"""Each kind says which units of a host its configurations hold alone (`HoldsUnits`), and which
shares of its pools they take (`HoldsShares`)."""

from __future__ import annotations

from typing import Any

import pytest

from nfvplace.models.configuration import VmConfiguration
from nfvplace.placement.resources import CACHE_WAYS, KINDS, MEMORY
from nfvplace.placement.resources.cpu import CPU
from nfvplace.placement.resources.devices import DEVICES
from nfvplace.placement.resources.holding import HeldUnit, PoolShare
from nfvplace.placement.resources.nics import NICS
from nfvplace.placement.resources.stages import HoldsShares, HoldsUnits

CONFIG = VmConfiguration.model_validate(
    {
        "vm": "vm",
        "instance": "pl-1/vm",
        "host": "h1",
        "cpu_sets": [
            {
                "id": 0,
                "numa_node": 1,
                "vcpu_pins": {"0": 9, "1": 10},
                "memory_mib": 2048,
                "hugepages": {"size_kib": 1048576, "count": 2},
                "reserved_siblings": [13],
                "cache_ways": {"domain": 1, "first_way": 8, "ways": 2},
            }
        ],
        "emulator_pins": [11],
        "interfaces": [
            {"name": "a", "mode": "sriov", "pci_address": "0000:58:02.1"},
            {"name": "b", "mode": "dedicated", "pci_address": "0000:58:00.0"},
            {"name": "c", "mode": "vswitch"},
        ],
        "pci_devices": [{"pci_address": "0000:3D:00.0", "class": "crypto", "numa_node": 1}],
    }
)

HELD: dict[str, list[HeldUnit]] = {
    CPU.name: [
        HeldUnit("pu", "9"),
        HeldUnit("pu", "10"),
        HeldUnit("pu", "11"),
        HeldUnit("pu", "13"),
    ],
    NICS.name: [HeldUnit("vf", "0000:58:02.1"), HeldUnit("port", "0000:58:00.0")],
    DEVICES.name: [HeldUnit("pci", "0000:3d:00.0")],  # lower case: addresses compare case-blind
    CACHE_WAYS.name: [HeldUnit("cache_way", "1/8"), HeldUnit("cache_way", "1/9")],
}


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: str(k.name))
def test_each_kind_names_the_units_it_holds_alone(kind: Any) -> None:
    if kind.name not in HELD:  # shared PUs, memory, capabilities...: nothing held alone
        assert not isinstance(kind, HoldsUnits)
        return
    assert isinstance(kind, HoldsUnits)
    assert sorted(kind.held_units(CONFIG)) == sorted(HELD[kind.name])


def test_a_unit_kind_fits_the_claim_rows() -> None:
    """The claim rows keep a unit's kind in 16 characters and its id in 64."""
    for units in HELD.values():
        assert all(len(u.kind) <= 16 and len(u.unit) <= 64 for u in units)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: str(k.name))
def test_each_kind_names_the_shares_of_pools_it_takes(kind: Any) -> None:
    if kind.name != MEMORY.name:
        assert not isinstance(kind, HoldsShares)
        return
    assert isinstance(kind, HoldsShares)
    assert list(kind.held_shares(CONFIG)) == [PoolShare(1, 1048576, 2)]
