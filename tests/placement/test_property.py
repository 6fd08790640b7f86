"""Property tests: every placement of a random fleet and VM passes the independent checker and can be
claimed; an answer of "no fit" is checked against a brute-force search where one is simple."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from checker import violations
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nfvplace
from nfvplace.claims import claim, claim_all
from nfvplace.placement import (
    FleetIndex,
    place,  # the engine door: these cases probe the engine, lint aside
)
from nfvplace.placement.index import free_of

SETTINGS = settings(
    max_examples=int(__import__("os").environ.get("NFVPLACE_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


@st.composite
def hosts(draw: st.DrawFn, count: int = 3) -> list[nfvplace.ComputeHostDescriptor]:
    out = []
    for k in range(draw(st.integers(1, count))):
        n_nodes = draw(st.integers(1, 3))
        nodes = []
        for _ in range(n_nodes):
            ports = [
                PortSpec(
                    speed=draw(st.sampled_from([10, 25, 100])),
                    vfs=draw(st.integers(0, 3)),
                    vfs_used=draw(st.integers(0, 1)),
                    bandwidth_used=draw(st.sampled_from([0.0, 5.0])),
                )
                for _ in range(draw(st.integers(0, 2)))
            ]
            for p in ports:
                p.vfs_used = min(p.vfs_used, p.vfs)
                if p.vfs_used:
                    p.usage = "sriov"
            total = draw(st.integers(0, 8))
            nodes.append(
                NodeSpec(
                    cores=draw(st.integers(1, 6)),
                    hugepages_1g=total,
                    hugepages_1g_used=draw(st.integers(0, total)),
                    memory_mib=draw(st.sampled_from([8192, 16384, 32768])) + total * 1024,
                    ports=ports,
                )
            )
        smt = draw(st.booleans())
        cores = sum(n.cores for n in nodes)
        pus = list(range(cores * (2 if smt else 1)))
        used = draw(st.lists(st.sampled_from(pus), max_size=len(pus) // 2, unique=True))
        rest = [p for p in pus if p not in used]
        ineligible = draw(st.lists(st.sampled_from(rest), max_size=3, unique=True)) if rest else []
        rest = [p for p in rest if p not in ineligible]
        shared_pus = draw(st.lists(st.sampled_from(rest), max_size=4, unique=True)) if rest else []
        shared = {
            p: (
                draw(st.sampled_from([1.0, 2.0, 4.0])),
                draw(st.sampled_from([0.0, 0.25, 0.5, 0.9])),
            )
            for p in shared_pus
        }
        out.append(
            host(
                f"h{k}",
                nodes,
                smt=smt,
                used=dict.fromkeys(used, "other"),
                ineligible=tuple(ineligible),
                shared=shared,
            )
        )
    return out


@st.composite
def vms(draw: st.DrawFn) -> nfvplace.VmDescriptor:
    if draw(st.integers(0, 4)) == 0:  # a plain cloud VM, pinned or oversubscribed
        return vm(
            "cloud",
            vcpus=draw(st.integers(1, 6)),
            memory_mib=draw(st.sampled_from([512, 2048, 8192])),
            cpu_oversubscription=draw(st.booleans()),
        )
    n_sets = draw(st.integers(1, 2))
    sets: list[dict[str, Any]] = []
    first = 0
    for k in range(n_sets):
        vcpus = draw(st.integers(1, 5))
        interfaces = tuple(
            {
                "name": f"e{k}{i}",
                "mode": draw(st.sampled_from(["sriov", "dedicated"])),
                "speed_gbps": draw(st.sampled_from([10, 25])),
                "bandwidth_gbps": draw(st.sampled_from([0, 2, 10])),
            }
            for i in range(draw(st.integers(0, 2)))
        )
        sets.append(
            cpu_set(
                k,
                vcpus,
                first_vcpu=first,
                pairs=draw(st.booleans()),
                hugepages_1g=draw(st.integers(0, 3)),
                memory_mib=4096,
                interfaces=interfaces,
                thread_policy=draw(st.sampled_from([None, "prefer", "isolate"])),
            )
        )
        first += vcpus
    return vm(
        "rnd",
        sets,
        emulator_threads=draw(st.sampled_from(["share", "isolate"])),
        cpu_sets_may_share_node=draw(st.booleans()),
        cpu_thread_policy=draw(st.sampled_from(["isolate", "prefer", "require"])),
    )


@SETTINGS
@given(fleet=hosts(), v=vms(), policy=st.sampled_from(["pack", "spread", "least-fragmentation"]))
def test_every_placement_passes_the_independent_checker(
    fleet: list[nfvplace.ComputeHostDescriptor], v: nfvplace.VmDescriptor, policy: str
) -> None:
    before = [h.model_dump() for h in fleet]
    result = place(fleet, v, policy=policy)
    assert [h.model_dump() for h in fleet] == before  # inputs untouched
    again = place(fleet, v, policy=policy)
    assert again.configurations == result.configurations  # deterministic
    if result.ok:
        assert violations(fleet, v, result.configurations) == []
        config = result.configuration
        original = next(h for h in fleet if h.id == config.host)
        assert result.hosts[config.host] == claim(original, config)
    else:
        diagnosis = result.diagnosis
        assert diagnosis is not None
        assert diagnosis.summary.startswith(f"0/{len(fleet)} hosts fit: ")
        assert sorted(r.host for r in diagnosis.rejections) == sorted(h.id for h in fleet)
        counts = sum(
            int(part.split(" ", 1)[0]) for part in diagnosis.summary.split(": ", 1)[1].split(", ")
        )
        assert counts == len(fleet)


@st.composite
def whole_core_fleets(draw: st.DrawFn) -> list[tuple[list[int], list[int], list[int]]]:
    """Per host, per node: free whole cores, free 1 GiB pages, free normal MiB (no half cores)."""
    return draw(
        st.lists(
            st.tuples(
                st.lists(st.integers(0, 5), min_size=1, max_size=3),
                st.lists(st.integers(0, 6), min_size=3, max_size=3),
                st.lists(st.sampled_from([0, 2048, 8192]), min_size=3, max_size=3),
            ),
            min_size=1,
            max_size=4,
        )
    )


@SETTINGS
@given(
    shape=whole_core_fleets(),
    vcpus=st.integers(1, 8),
    pairs=st.booleans(),
    pages=st.integers(0, 4),
    memory=st.sampled_from([1024, 4096, 8192]),
)
def test_no_fit_only_when_brute_force_finds_nothing(
    shape: list[tuple[list[int], list[int], list[int]]],
    vcpus: int,
    pairs: bool,
    pages: int,
    memory: int,
) -> None:
    fleet = []
    for k, (free_cores, free_pages, free_mem) in enumerate(shape):
        specs = []
        used: dict[int, str] = {}
        cores_per_node = 5
        total_cores = cores_per_node * len(free_cores)
        for j, free in enumerate(free_cores):
            specs.append(
                NodeSpec(
                    cores=cores_per_node,
                    hugepages_1g=free_pages[j],
                    memory_mib=free_pages[j] * 1024 + free_mem[j],
                )
            )
            for c in range(j * cores_per_node + free, (j + 1) * cores_per_node):
                used[c] = "other"
                used[c + total_cores] = "other"
        fleet.append(host(f"h{k}", specs, used=used))
    v = vm(
        "bf", [cpu_set(0, vcpus, pairs=pairs, hugepages_1g=pages, memory_mib=memory + pages * 1024)]
    )
    # brute force: a node with enough whole cores (pairs: ceil(v/2) cores with prefer-free pairing;
    # isolate singles: one core each), pages and memory
    pair_count = vcpus // 2 if pairs else 0
    singles = vcpus - 2 * pair_count
    need_cores = pair_count + singles
    feasible = any(
        free_cores[j] >= need_cores and free_pages[j] >= pages and free_mem[j] >= memory
        for free_cores, free_pages, free_mem in shape
        for j in range(len(free_cores))
    )
    result = place(fleet, v)
    assert result.ok == feasible, result.diagnosis and result.diagnosis.summary
    if result.ok:
        assert violations(fleet, v, result.configurations) == []


@SETTINGS
@given(fleet=hosts(), v=vms(), w=vms())
def test_claiming_several_at_once_equals_claiming_one_after_another(
    fleet: list[nfvplace.ComputeHostDescriptor], v: nfvplace.VmDescriptor, w: nfvplace.VmDescriptor
) -> None:
    """`claim_all` (a store reader replaying the placements committed since a host's stored
    document) gives what claims one at a time gave, whatever the kinds each VM holds."""
    configs = []
    current = {h.id: h for h in fleet}
    for k, vm_ in enumerate([v, w, v]):
        result = place(list(current.values()), vm_, instance=f"p{k}/{vm_.name}")
        if result.ok:
            configs.extend(result.configurations)
            current.update(result.hosts)
    for host_ in fleet:
        on_host = [c for c in configs if c.host == host_.id]
        replayed, issues = claim_all(host_, on_host)
        assert issues == ()
        assert replayed == current[host_.id]


def _columns(fleet: FleetIndex) -> dict[str, Any]:
    """Every column of the index (each kind's arrays and mappings), comparable with `==`."""
    out: dict[str, Any] = {"node_id": fleet.node_id.tolist(), "ids": fleet.ids}
    for name, table in fleet.tables.items():
        for field in dataclasses.fields(table):  # type: ignore[arg-type]
            value = getattr(table, field.name)
            out[f"{name}.{field.name}"] = value.tolist() if isinstance(value, np.ndarray) else value
    return out


@SETTINGS
@given(fleet=hosts(), v=vms(), w=vms())
def test_an_index_kept_up_to_date_equals_one_built_afresh(
    fleet: list[nfvplace.ComputeHostDescriptor], v: nfvplace.VmDescriptor, w: nfvplace.VmDescriptor
) -> None:
    """The service's index is built once and updated with each claimed host (`FleetIndex.update`):
    its columns must be those of an index built from the hosts as they now are, and the free
    resources it keeps of each host (kept in part from the host's previous version: `free_again`)
    those read afresh."""
    index = FleetIndex(fleet)
    current = {h.id: h for h in fleet}
    for k, vm_ in enumerate([v, w, v, w]):
        result = place(index, vm_, instance=f"p{k}/{vm_.name}")
        if result.ok:
            index.update_many(result.hosts.values())
            current.update(result.hosts)
    assert _columns(index) == _columns(FleetIndex(list(current.values())))
    for i, host_id in enumerate(index.ids):
        assert index.free(i) == free_of(current[host_id])
