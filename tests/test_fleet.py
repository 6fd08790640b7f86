"""`nfvplace.Fleet`, and `nfvplace.place` on lists: the same decisions as the engine's own index."""

from __future__ import annotations

import gc
import random
from pathlib import Path

import pytest

import nfvplace
from nfvplace import errors
from nfvplace.errors import DescriptorError, LintError
from nfvplace.models import ComputeHostDescriptor, VmDescriptor, parse_document, parse_text
from nfvplace.placement import FleetIndex
from nfvplace.placement.index import cache

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def example_hosts(copies: int = 1) -> list[ComputeHostDescriptor]:
    loaded = nfvplace.load(EXAMPLES / "fleet") + nfvplace.load(EXAMPLES / "hosts")  # type: ignore[operator]
    return [
        h.model_copy(update={"id": f"{h.id}-{k}"}) if copies > 1 else h
        for k in range(copies)
        for h in loaded
    ]


def example_vms() -> list[VmDescriptor]:
    vms = [nfvplace.load(p) for p in sorted((EXAMPLES / "vms").glob("*.yaml"))]
    return [vm for vm in vms if isinstance(vm, VmDescriptor)]


def requests(n: int, seed: int) -> list[VmDescriptor]:
    rng = random.Random(seed)
    return [rng.choice(example_vms()) for _ in range(n)]


def outcome(result: nfvplace.placement.PlacementResult) -> str:
    if result.ok:
        return "".join(nfvplace.dump(c) for c in result.configurations)
    assert result.diagnosis is not None
    return result.diagnosis.summary


def test_every_door_decides_as_a_fresh_index_does() -> None:
    """Fresh index per call (the list path before it kept indexes), the engine's index updated by
    hand, the list path with the documented loop, and `Fleet`: the same configurations."""
    hosts = example_hosts(copies=3)
    seq = requests(40, seed=7)
    fresh, by_index, by_list, by_fleet = [], [], [], []
    state_fresh = list(hosts)
    state_list = list(hosts)
    index = FleetIndex(hosts)
    fleet = nfvplace.Fleet(hosts)
    for k, vm in enumerate(seq):
        result = nfvplace.place(FleetIndex(state_fresh), vm, seed=k)
        state_fresh = [result.hosts.get(h.id, h) for h in state_fresh]
        fresh.append(outcome(result))
        result = nfvplace.place(index, vm, seed=k)
        index.update_many(result.hosts.values())
        by_index.append(outcome(result))
        result = nfvplace.place(state_list, vm, seed=k)
        state_list = [result.hosts.get(h.id, h) for h in state_list]
        by_list.append(outcome(result))
        by_fleet.append(outcome(fleet.place(vm, seed=k)))
    assert sum(o.startswith("schema") for o in fresh) >= 20  # most of them placed
    assert by_index == fresh
    assert by_list == fresh
    assert by_fleet == fresh
    assert fleet.hosts == state_fresh == state_list


def test_the_same_host_objects_reuse_their_index() -> None:
    hosts = example_hosts()
    vm = example_vms()[0]
    first = cache.index_for(hosts)
    assert cache.index_for(list(hosts)) is first
    assert cache.index_for(tuple(hosts)) is first
    equal_copies = [h.model_copy() for h in hosts]
    assert cache.index_for(equal_copies) is not first
    nfvplace.place(hosts, vm)
    assert cache.index_for(hosts) is first  # placing does not change the kept index


def test_a_changed_host_gets_its_own_index() -> None:
    hosts = example_hosts()
    result = nfvplace.place(hosts, example_vms()[0])
    assert result.ok
    after = [result.hosts.get(h.id, h) for h in hosts]
    before_index, after_index = cache.index_for(hosts), cache.index_for(after)
    assert after_index is not before_index
    used = result.configuration.host
    assert after_index.host(used) == result.hosts[used]
    assert before_index.host(used) == next(h for h in hosts if h.id == used)
    swapped = list(reversed(after))  # same objects, another order: another index
    assert cache.index_for(swapped).ids == [h.id for h in swapped]


def test_collected_hosts_drop_their_index() -> None:
    cache.clear()
    hosts = example_hosts(copies=2)
    cache.index_for(hosts)
    assert len(cache._entries) == 1
    del hosts
    gc.collect()
    cache.index_for(example_hosts())
    assert len(cache._entries) == 1


def test_fleet_places_claims_and_hands_back_every_host() -> None:
    hosts = example_hosts()
    fleet = nfvplace.Fleet(hosts)
    assert len(fleet) == len(hosts)
    assert repr(fleet) == f"Fleet({len(hosts)} hosts, 0 VM instances)"
    vm = example_vms()[1]
    result = fleet.place(vm)
    assert result.ok
    config = result.configuration
    assert len(fleet.hosts) == len(hosts)  # all of them, not only the one that changed
    assert fleet.host(config.host) == result.hosts[config.host]
    assert config.owner in {i.id for i in fleet.host(config.host).instances}
    assert repr(fleet) == f"Fleet({len(hosts)} hosts, 1 VM instances)"
    assert hosts == example_hosts()  # the descriptors given are never changed
    second = fleet.place(vm)
    assert second.ok
    assert second.configuration.owner != config.owner
    released = fleet.release(result)
    assert config.owner not in {i.id for i in released[config.host].instances}
    assert fleet.release(result) == released  # idempotent
    fleet.release(second.configuration)
    assert fleet.hosts == hosts


def test_try_place_is_a_dry_run() -> None:
    fleet = nfvplace.Fleet(EXAMPLES / "fleet")
    before = fleet.hosts
    result = fleet.try_place(example_vms()[0])
    assert result.ok
    assert fleet.hosts == before


def test_no_fit_leaves_the_fleet_as_it_was() -> None:
    fleet = nfvplace.Fleet(example_hosts())
    huge = parse_document(
        parse_text("schema: nfvplace/vmd/v1\nname: huge\nvcpus: 4096\nmemory_mib: 512\n")
    )
    assert isinstance(huge, VmDescriptor)
    result = fleet.place(huge)
    assert not result.ok
    assert result.diagnosis is not None
    assert fleet.hosts == example_hosts()


def test_wrong_inputs_say_what_to_give() -> None:
    with pytest.raises(DescriptorError) as info:
        nfvplace.Fleet([example_vms()[0]])  # type: ignore[list-item]
    assert info.value.code == errors.INPUT_INVALID
    assert "not a Compute Host Descriptor" in str(info.value)
    placed = nfvplace.Fleet(example_hosts()).place(example_vms()[0])
    elsewhere = [h for h in example_hosts() if h.id != placed.configuration.host]
    with pytest.raises(DescriptorError) as info:
        nfvplace.Fleet(elsewhere).release(placed)
    assert info.value.code == errors.INPUT_INVALID


def test_lint_passes_a_descriptor_object_once_and_refuses_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fleet remembers the descriptors lint passed by identity (they are frozen), and the
    shapes of those it passed (all but the name): placing one descriptor again, an equal copy,
    or the same under another name lints it no more; another shape is linted; a refused one is
    refused each time, with lint's own error."""
    calls: list[str] = []
    real = nfvplace.fleet.refuse

    def counting(vm: VmDescriptor, what: str) -> None:
        calls.append(vm.name)
        real(vm, what)

    monkeypatch.setattr(nfvplace.fleet, "refuse", counting)
    fleet = nfvplace.Fleet(example_hosts())
    vm = next(vm for vm in example_vms() if vm.cpu_sets)
    fleet.place(vm)
    fleet.try_place(vm)
    fleet.place(vm)
    assert calls == [vm.name]
    fleet.place(vm.model_copy())
    fleet.place(vm.model_copy(update={"name": "renamed"}))
    assert calls == [vm.name]
    fleet.place(vm.model_copy(update={"memory_oversubscription": True}))
    assert calls == [vm.name, vm.name]
    again = vm.cpu_sets[0].model_copy(update={"id": 99})  # its vCPUs twice: NFV101
    bad = vm.model_copy(update={"cpu_sets": (*vm.cpu_sets, again)})
    for _ in range(2):
        with pytest.raises(LintError, match="NFV101") as refused:
            fleet.place(bad)
        with pytest.raises(LintError) as gated:
            nfvplace.lint.gate(bad, "VM Descriptor or VNF template")
        assert (refused.value.code, str(refused.value)) == (gated.value.code, str(gated.value))
    assert calls == [vm.name] * 4


def test_a_fleet_remembers_a_bounded_number_of_passed_descriptors() -> None:
    fleet = nfvplace.Fleet(example_hosts())
    vm = example_vms()[0]
    for k in range(nfvplace.fleet.PASSED + 10):
        fleet.try_place(vm.model_copy(update={"name": f"vm-{k}"}))
    assert len(fleet._passed) == nfvplace.fleet.PASSED
