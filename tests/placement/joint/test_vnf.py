"""VNF templates: every member and instance placed, anti-affinity, link locality, all or nothing."""

from __future__ import annotations

from typing import Any

from builders import NodeSpec, cpu_set, host, vm
from checker import violations

from nfvplace.models.vnf import VnfTemplate
from nfvplace.placement import place  # the engine door: these cases probe the engine, lint aside


def template(**extra: Any) -> VnfTemplate:
    member = vm("du", [cpu_set(0, 4, hugepages_1g=2)]).model_dump(by_alias=True)
    worker = vm("cu", [cpu_set(0, 2)]).model_dump(by_alias=True)
    data: dict[str, Any] = {
        "schema": "nfvplace/vnf/v1",
        "name": "ran",
        "members": [
            {"name": "du", "descriptor": member, "count": 2},
            {"name": "cu", "descriptor": worker},
        ],
    }
    data.update(extra)
    return VnfTemplate.model_validate(data)


def test_all_members_and_instances_placed_without_overlap() -> None:
    hosts = [host("a"), host("b")]
    t = template()
    result = place(hosts, t)
    assert result.ok
    assert [c.instance for c in result.configurations] == ["ran.du-1", "ran.du-2", "ran.cu-1"]
    du = [c for c in result.configurations if c.vm == "du"]
    assert violations(hosts, t.members[0].descriptor, du) == []  # type: ignore[arg-type]
    pus = [(c.host, pu) for c in result.configurations for pu in c.held_cpus]
    assert len(pus) == len(set(pus))


def test_anti_affinity_spreads_members() -> None:
    hosts = [host("a"), host("b"), host("c")]
    t = template(anti_affinity=[{"members": ["du", "cu"]}])
    result = place(hosts, t)
    assert result.ok
    assert len({c.host for c in result.configurations}) == 3


def test_anti_affinity_all_or_nothing() -> None:
    hosts = [host("a"), host("b")]
    result = place(hosts, template(anti_affinity=[{"members": ["du", "cu"]}]))
    assert not result.ok
    assert result.configurations == ()
    assert result.hosts == {}
    assert result.diagnosis is not None
    assert result.diagnosis.summary.startswith("VNF ran: member cu instance 1/1 does not fit")
    assert "2 already host a member of the same anti-affinity group" in result.diagnosis.summary


def test_same_host_link() -> None:
    hosts = [host("a", nodes=[NodeSpec(cores=8), NodeSpec(cores=8)]), host("b")]
    t = template(
        links=[
            {
                "name": "f1",
                "endpoints": [
                    {"member": "du", "interface": "x"},
                    {"member": "cu", "interface": "y"},
                ],
                "locality": "same_host",
            }
        ]
    )
    result = place(hosts, t, policy="spread")
    assert result.ok
    du_hosts = {c.host for c in result.configurations if c.vm == "du"}
    cu_host = next(c.host for c in result.configurations if c.vm == "cu")
    assert cu_host in du_hosts
