"""Defragmentation advice: moves of existing VMs that make room for a VM that fits nowhere."""

from __future__ import annotations

from builders import NodeSpec, cpu_set, host, vm

import nfvplace
from nfvplace.claims import claim, release
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
