"""A single VM filtered a batch of hosts at a time finds the host and the configuration the full
pass finds, in as many batches as it takes; the full pass answers when none fits."""

from __future__ import annotations

import numpy as np
import pytest
from builders import cpu_set, host, vm

from bench.hostgen import impossible_requests, make_fleet, request_stream
from nfvplace.placement import FleetIndex
from nfvplace.placement.engine import batched
from nfvplace.placement.engine.batched import applies, place_first
from nfvplace.placement.engine.place import place_vm
from nfvplace.placement.options import parse_options


@pytest.mark.parametrize(("policy", "first"), [("pack", 2), ("pack", 128), ("spread", 3)])
def test_same_host_and_configuration_as_the_full_pass(
    policy: str, first: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Placing and claiming a stream: every answer is the full pass's (tiny first batches make
    the host be found in a later batch)."""
    monkeypatch.setattr(batched, "FIRST", first)
    fleet = FleetIndex(make_fleet(60, seed=5))
    options = parse_options(policy=policy)
    consider = np.ones(len(fleet), dtype=np.bool_)
    consider[::7] = False  # hosts left out (`exclude`) stay out
    for k, vm_ in enumerate(request_stream(40, seed=6)):
        full = place_vm(fleet, vm_, options, consider=consider, instance=f"i-{k}")
        ours = place_first(fleet, vm_, options, consider, f"i-{k}")
        if full.configuration is None:
            assert ours is None
            continue
        assert ours is not None
        assert ours.configuration == full.configuration
        assert ours.host == full.host
        assert ours.considered == int(consider.sum())
        fleet.claimed([full.host])


def test_none_when_no_host_fits() -> None:
    fleet = FleetIndex(make_fleet(20, seed=1))
    options = parse_options()
    for vm_ in impossible_requests(3):
        assert place_first(fleet, vm_, options, None, None) is None


def test_lowest_keys_take_every_host_tying_the_last() -> None:
    keys = np.array([5, 1, 5, 3, 5, 0], dtype=np.int64)
    batch, rest = batched._lowest(keys, np.arange(6), 4)
    assert batch.tolist() == [5, 1, 3, 0, 2, 4]  # key 5 ties: all three, by position
    assert rest.tolist() == []
    batch, rest = batched._lowest(keys, np.arange(6), 2)
    assert batch.tolist() == [5, 1]
    assert rest.tolist() == [0, 2, 3, 4]


@pytest.mark.parametrize(
    ("options", "variants", "expected"),
    [
        ({}, False, True),
        ({"policy": "spread"}, False, True),
        ({"policy": "least-fragmentation"}, False, False),
        ({"explain": True}, False, False),
        ({"max_candidates": 3}, False, False),
        ({}, True, False),
    ],
)
def test_applies_only_where_the_keys_and_the_answer_need_no_full_pass(
    options: dict[str, object], variants: bool, expected: bool
) -> None:
    extra = {"variants": [{"name": "v", "match": {"processor_vendor": "AuthenticAMD"}}]}
    v = vm(cpu_sets=[cpu_set(0, 2)], **(extra if variants else {}))
    assert applies(v, parse_options(**options)) is expected


def test_the_door_places_through_it_and_still_diagnoses() -> None:
    """`nfvplace.place` places as before; a VM that fits nowhere gets the full diagnosis."""
    import nfvplace

    hosts = [host("a"), host("b", used={0: "x", 16: "x"})]
    placed = nfvplace.place(hosts, vm(cpu_sets=[cpu_set(0, 2)]))
    assert placed.configuration.host == "b"  # pack: the fuller host
    refused = nfvplace.place(hosts, vm(cpu_sets=[cpu_set(0, 200)]))
    assert not refused.configurations
    assert refused.diagnosis is not None
    assert len(refused.diagnosis.rejections) == 2
