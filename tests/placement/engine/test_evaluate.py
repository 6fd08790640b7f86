"""`evaluate`: every host's answer for one VM, without claiming (the schedulers' door)."""

from __future__ import annotations

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from checker import violations
from reference import host_fits

import nfvplace
from nfvplace.errors import LintError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.placement import evaluate, place


def _fleet() -> list[ComputeHostDescriptor]:
    return [
        host("full", [NodeSpec(cores=2), NodeSpec(cores=2)], used={0: "x", 1: "x"}),
        host("big", [NodeSpec(cores=8), NodeSpec(cores=8)]),
        host("small", [NodeSpec(cores=4), NodeSpec(cores=4)]),
        host("nosmt", [NodeSpec(cores=8)], smt=False),
        host("pages", [NodeSpec(cores=8, hugepages_1g=1), NodeSpec(cores=8, hugepages_1g=1)]),
    ]


CASES = [
    pytest.param(vm(cpu_sets=[cpu_set(vcpus=4, hugepages_1g=2)]), id="pairs+pages"),
    pytest.param(vm(cpu_sets=[cpu_set(vcpus=6, pairs=False)]), id="isolated"),
    pytest.param(
        vm(
            cpu_sets=[
                cpu_set(
                    vcpus=2,
                    interfaces=({"name": "e0", "mode": "sriov", "speed_gbps": 10},),
                )
            ]
        ),
        id="sriov-none",
    ),
]


@pytest.mark.parametrize("request_vm", CASES)
def test_every_host_answers_as_the_reference_says(request_vm: nfvplace.VmDescriptor) -> None:
    hosts = _fleet()
    answers = evaluate(hosts, request_vm)
    assert [a.host for a in answers] == [h.id for h in hosts]
    for h, answer in zip(hosts, answers, strict=True):
        assert answer.fits == host_fits(h, request_vm), answer.host
        if answer.fits:
            assert answer.configuration is not None
            assert answer.configuration.host == h.id
            assert violations([h], request_vm, [answer.configuration]) == []
            assert answer.reasons == ()
            assert 0 <= answer.score <= 100
        else:
            assert answer.configuration is None
            assert answer.score == 0
            assert answer.reasons
            assert all(r.host == h.id and r.message for r in answer.reasons)


@pytest.mark.parametrize("policy", ["pack", "spread", "least-fragmentation"])
def test_the_best_score_is_the_host_place_picks(policy: str) -> None:
    hosts = [*_fleet(), host("half", [NodeSpec(cores=8)], used={0: "y", 8: "y", 1: "y"})]
    request_vm = vm(cpu_sets=[cpu_set(vcpus=2)])
    answers = evaluate(hosts, request_vm, policy=policy)
    fitting = [a for a in answers if a.fits]
    assert len(fitting) >= 3
    best = max(fitting, key=lambda a: a.score)
    assert best.score == 100
    assert min(a.score for a in fitting) == 0
    assert place(hosts, request_vm, policy=policy).configuration.host == best.host


def test_nothing_is_claimed() -> None:
    hosts = _fleet()
    before = [h.model_dump() for h in hosts]
    evaluate(hosts, vm(cpu_sets=[cpu_set(vcpus=2)]))
    assert [h.model_dump() for h in hosts] == before


def test_no_fit_reasons_carry_numbers() -> None:
    hosts = [host("tight", [NodeSpec(cores=2, ports=[PortSpec(speed=10, vfs=0)])])]
    wanted = vm(cpu_sets=[cpu_set(vcpus=8)])
    (answer,) = evaluate(hosts, wanted)
    assert not answer.fits
    assert any("4" in r.message or "8" in r.message for r in answer.reasons)
    assert answer.to_dict()["reasons"] == [r.message for r in answer.reasons]


def test_the_library_door_lints_first() -> None:
    bad = vm(cpu_sets=[{"id": 0, "vcpus": [0, 1], "howtogroup": [[0, 5]], "memory_mib": 1024}])
    with pytest.raises(LintError):
        nfvplace.evaluate(_fleet(), bad)


@pytest.mark.parametrize("policy", ["pack", "spread"])
@pytest.mark.parametrize("request_vm", CASES)
def test_verdicts_alone_are_the_same_answers_without_configurations(
    request_vm: nfvplace.VmDescriptor, policy: str
) -> None:
    hosts = [*_fleet(), host("half", [NodeSpec(cores=8)], used={0: "y", 8: "y", 1: "y"})]
    full = evaluate(hosts, request_vm, policy=policy)
    verdicts = evaluate(hosts, request_vm, policy=policy, configurations=False)
    assert [a.configuration for a in verdicts] == [None] * len(hosts)
    assert [(a.host, a.fits, a.score, a.rank, a.reasons) for a in verdicts] == [
        (a.host, a.fits, a.score, a.rank, a.reasons) for a in full
    ]
