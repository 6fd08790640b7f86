"""Defragmentation advice: moves of existing VMs that make room for a VM that fits nowhere."""

from __future__ import annotations

from builders import NodeSpec, cpu_set, host, vm

import nfvplace
from nfvplace.claims import claim, release
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.placement import suggest_moves
from nfvplace.placement.joint.moves import descriptor_of


def _fragmented() -> tuple[list, list]:  # type: ignore[type-arg]
    """Two 4-core hosts, each with a 2-core VM on it: a 3-core VM fits nowhere."""
    hosts = [host("a", nodes=[NodeSpec(cores=4)]), host("b", nodes=[NodeSpec(cores=4)])]
    placed = []
    for k, h in enumerate(list(hosts)):
        result = nfvplace.place([h], vm("old", [cpu_set(0, 4)]), instance=f"old-{k}")
        hosts[k] = result.hosts[h.id]
        placed.append(result.configuration)
    return hosts, placed


def test_one_move_makes_room() -> None:
    hosts, placed = _fragmented()
    new = vm("new", [cpu_set(0, 6)])
    assert not nfvplace.place(hosts, new).ok
    advice = suggest_moves(hosts, new, placed)
    assert advice is not None
    (move,) = advice.moves
    assert move.source != move.target
    assert advice.configuration.host == move.source
    # applying the advice on the hosts as they are works: release, claim the moved VM, claim the new
    after = {h.id: h for h in hosts}
    moved_from = next(c for c in placed if c.owner == move.instance)
    after[move.source] = release(after[move.source], moved_from)
    after[move.target] = claim(after[move.target], move.configuration)
    after[move.source] = claim(after[move.source], advice.configuration)
    assert advice.to_dict()["moves"][0]["from"] == move.source


def test_no_advice_when_no_move_helps() -> None:
    hosts, placed = _fragmented()
    assert suggest_moves(hosts, vm("huge", [cpu_set(0, 10)]), placed) is None


def test_descriptor_of_a_configuration_asks_for_the_same_shape() -> None:
    _, placed = _fragmented()
    again = descriptor_of(placed[0])
    assert again.name == "old"
    assert [len(cs.vcpus) for cs in again.cpu_sets] == [4]
    assert again.cpu_sets[0].howtogroup == ((0, 1), (2, 3))
    assert nfvplace.place([host("c", nodes=[NodeSpec(cores=2)])], again).ok


def test_descriptor_of_keeps_each_cpu_sets_cache_ways_and_thread_policy() -> None:
    """A moved VM is placed again with its cache demand (a defragmentation move once dropped it)."""
    data = host("w", nodes=[NodeSpec(cores=6), NodeSpec(cores=6)]).model_dump(
        mode="json", by_alias=True
    )
    data["cache_allocation"] = {
        "classes": 4,
        "domains": [{"id": k, "numa_nodes": [k], "ways": 11, "way_kib": 2560} for k in (0, 1)],
    }
    cached = ComputeHostDescriptor.model_validate(data)
    sets = [cpu_set(0, 2), cpu_set(1, 2, first_vcpu=2)]
    sets[0]["cache_ways"] = 4
    sets[1]["thread_policy"] = "isolate"
    result = nfvplace.place([cached], vm("cached", sets, cpu_sets_may_share_node=True))
    assert result.ok, result.diagnosis.summary
    again = descriptor_of(result.configuration)
    assert [cs.cache_ways for cs in again.cpu_sets] == [4, None]
    assert again.cpu_sets[1].thread_policy == "isolate"
    moved = nfvplace.place([cached], again)
    assert moved.ok, moved.diagnosis.summary
    ways = moved.configuration.cpu_sets[0].cache_ways
    assert ways is not None
    assert ways.ways == 4


def test_descriptor_of_keeps_floating_cpu_sets() -> None:
    config = VmConfiguration.model_validate(
        {
            "vm": "fl",
            "host": "h",
            "cpu_sets": [
                {
                    "id": 0,
                    "numa_node": 1,
                    "vcpu_pins": {},
                    "memory_mib": 2048,
                    "floating": {"vcpus": [0, 1], "cpus": [4, 5, 12]},
                },
            ],
        }
    )
    again = descriptor_of(config)
    assert [(cs.vcpus, cs.floating) for cs in again.cpu_sets] == [((0, 1), True)]
