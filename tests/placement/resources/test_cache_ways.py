"""The L3 cache ways kind (Intel RDT CAT): fit, reasons, stacking, claims, capacity, relaxation,
and what the renderers make of it."""

from __future__ import annotations

from typing import Any

import pytest
from builders import NodeSpec, cpu_set, host, vm

import nfvplace
from nfvplace.claims import claim, release
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex, Reason
from nfvplace.placement.joint.batch import BatchItem, of_batch
from nfvplace.placement.joint.relaxation import relax
from nfvplace.placement.options import Options
from nfvplace.render import render


def cached_host(
    name: str = "c",
    domains: list[dict[str, Any]] | None = None,
    classes: int = 4,
    nodes: int = 2,
    **extra: Any,
) -> ComputeHostDescriptor:
    data = host(name, [NodeSpec(cores=6) for _ in range(nodes)]).model_dump(
        mode="json", by_alias=True
    )
    data["cache_allocation"] = {
        "classes": classes,
        "domains": domains
        if domains is not None
        else [{"id": k, "numa_nodes": [k], "ways": 11, "way_kib": 2560} for k in range(nodes)],
        **extra,
    }
    return ComputeHostDescriptor.model_validate(data)


def asking(*ways: int, **kwargs: Any) -> VmDescriptor:
    sets = []
    for k, n in enumerate(ways):
        cs = cpu_set(k, 2, first_vcpu=2 * k)
        cs["cache_ways"] = n
        sets.append(cs)
    return vm(cpu_sets=sets, **kwargs)


def test_ways_are_taken_from_the_top_of_the_largest_free_run() -> None:
    taken = [{"first_way": 8, "ways": 3, "owner": "x"}]  # ways 0-7 free on cache 0
    h = cached_host(
        domains=[{"id": 0, "numa_nodes": [0, 1], "ways": 11, "way_kib": 2560, "allocations": taken}]
    )
    result = nfvplace.place([h], asking(3))
    ways = result.configuration.cpu_sets[0].cache_ways
    assert ways is not None
    assert (ways.domain, ways.first_way, ways.ways, ways.way_kib) == (0, 5, 3, 2560)
    assert ways.mask == 0b11100000


def test_fragmented_free_ways_do_not_fit_and_the_reason_says_so() -> None:
    holes = [{"first_way": k, "ways": 1, "owner": f"o{k}"} for k in (1, 3, 5, 7, 9)]
    h = cached_host(
        domains=[{"id": 0, "numa_nodes": [0, 1], "ways": 11, "allocations": holes}], classes=16
    )
    result = nfvplace.place([h], asking(2))
    assert not result.ok
    assert result.diagnosis is not None
    (rejection,) = result.diagnosis.rejections
    assert rejection.reason == Reason.cache_ways
    assert "1 free contiguous ways" in rejection.message  # 6 ways free, but none adjacent


@pytest.mark.parametrize(
    ("host_kwargs", "reason"),
    [
        ({"classes": 2, "classes_used": 1}, Reason.cache_classes),
        ({"classes": None}, Reason.cache_classes),  # an hwloc export does not say
    ],
)
def test_classes_of_service_run_out(host_kwargs: dict[str, Any], reason: Reason) -> None:
    result = nfvplace.place([cached_host(**host_kwargs)], asking(2))
    assert result.diagnosis is not None
    assert [r.reason for r in result.diagnosis.rejections] == [reason]


def test_a_host_without_cache_allocation_is_refused_only_for_vms_that_ask_ways() -> None:
    plain = host("plain", [NodeSpec(cores=6), NodeSpec(cores=6)])
    refused = nfvplace.place([plain], asking(2))
    assert refused.diagnosis is not None
    assert [r.reason for r in refused.diagnosis.rejections] == [Reason.cache_allocation]
    assert nfvplace.place([plain], vm(cpu_sets=[cpu_set(0, 2)])).ok


def test_cpu_sets_sharing_a_cache_stack_their_ways() -> None:
    shared = [{"id": 0, "numa_nodes": [0, 1], "ways": 11, "way_kib": 1024}]
    h = cached_host(domains=shared)
    result = nfvplace.place([h], asking(4, 5))
    a, b = (cs.cache_ways for cs in result.configuration.cpu_sets)
    assert a is not None
    assert b is not None
    assert a.mask & b.mask == 0
    assert (a.mask | b.mask).bit_count() == 9
    # 4 + 5 + 3 do not fit in 11 ways, even on two nodes
    assert not nfvplace.place([h], asking(4, 5, 3)).ok


def test_min_ways_rounds_a_small_ask_up() -> None:
    result = nfvplace.place([cached_host(min_ways=2)], asking(1))
    ways = result.configuration.cpu_sets[0].cache_ways
    assert ways is not None
    assert ways.ways == 2


def test_claim_and_release_are_exact_inverses_and_conflicts_are_named() -> None:
    h = cached_host()
    result = nfvplace.place([h], asking(3))
    config = result.configuration
    claimed = result.hosts[h.id]
    assert claimed == claim(h, config)
    assert release(claimed, config) == h
    with pytest.raises(nfvplace.NfvplaceError, match="are taken"):
        claim(claimed, config.model_copy(update={"instance": "someone-else"}))


def test_capacity_counts_what_placing_one_after_another_gives() -> None:
    h = cached_host(classes=8)
    want = asking(4)
    fleet = nfvplace.Fleet([h])
    placed = 0
    while fleet.place(want).ok:
        placed += 1
    report = nfvplace.capacity([h], want)
    assert report.count == placed == 4  # two 4-way runs per 11-way cache, one cache per node
    assert report.hosts[0].limited_by in ("cache ways", "cores")


def test_relaxation_bounds_instances_by_ways_and_classes() -> None:
    hosts = [cached_host(f"c{k}", classes=3) for k in range(2)]  # 2 classes left per host
    batch = of_batch([BatchItem(asking(6), 10)])
    relaxation = relax(FleetIndex(hosts), batch.members, Options())
    assert relaxation.bound == 4  # two per host: by classes (and by 11 ways a cache)
    assert relaxation.optimal


def test_vms_that_ask_no_ways_place_as_before() -> None:
    plain = host("p", [NodeSpec(cores=6), NodeSpec(cores=6)])
    cached = cached_host("p")
    want = vm(cpu_sets=[cpu_set(0, 4)])
    a, b = nfvplace.place([plain], want), nfvplace.place([cached], want)
    assert a.configuration.cpu_sets == b.configuration.cpu_sets


def test_libvirt_and_host_tuning_carry_the_ways() -> None:
    h = cached_host()
    result = nfvplace.place([h], asking(3))
    config = result.configuration
    xml = render(config, "libvirt").text
    assert "<cachetune vcpus=" in xml
    assert 'level="3"' in xml
    assert 'size="7680"' in xml  # 3 ways x 2560 KiB
    script = render(config, "host-tuning", host=result.hosts[h.id]).text
    ways = config.cpu_sets[0].cache_ways
    assert ways is not None
    assert f"L3:{ways.domain}={ways.mask:x}" in script
    assert "L3:0=ff;1=7ff" in script or "L3:0=7ff;1=ff" in script  # the default keeps the rest


@pytest.mark.parametrize(
    ("fmt", "target"), [("openstack", "a Nova flavor"), ("vmx", "a .vmx file")]
)
def test_renderers_that_cannot_reserve_ways_say_so(fmt: str, target: str) -> None:
    result = nfvplace.place([cached_host()], asking(3))
    warnings = render(result.configuration, fmt).warnings
    assert any("exclusive L3 cache ways" in w and target in w for w in warnings)
