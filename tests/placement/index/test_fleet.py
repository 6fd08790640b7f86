"""The fleet index: counts per node, updates after a claim, vocabulary growth."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.placement import FleetIndex
from nfvplace.placement.index import fleet
from nfvplace.placement.index.fleet import VIEW_CACHE
from nfvplace.placement.index.hosts import HOT, HostStore
from nfvplace.placement.resources.capabilities import CAPABILITIES_KIND
from nfvplace.placement.resources.cpu import CPU
from nfvplace.placement.resources.memory import MEMORY


def test_counts_classify_free_threads() -> None:
    # 8 cores (T=8): thread 8 (sibling of 0) host-reserved; 1 used by a VM (sibling 9 half busy)
    h = host(nodes=[NodeSpec(cores=4), NodeSpec(cores=4)], ineligible=(8,), used={1: "x"})
    cpu = FleetIndex([h]).table(CPU)
    assert cpu.whole[0].tolist() == [2, 4]
    # thread 0's sibling is host-reserved, 9's used: both only for `prefer` and the emulator PU
    assert cpu.half_busy[0].tolist() == [2, 0]
    assert cpu.free_threads[0] == 6 + 8


def test_update_after_claim_and_new_vocabulary() -> None:
    f = FleetIndex([host("a")])
    result = nfvplace.place(f, vm(cpu_sets=[cpu_set(0, 4, hugepages_1g=2)]))
    f.update_many(result.hosts.values())
    assert int(f.table(CPU).whole[0].sum()) == 6
    assert int(f.table(MEMORY).hugepages[0].sum()) == 14
    # a host with a port speed and page size never seen before rebuilds the columns
    f.update(host("b", nodes=[NodeSpec(hugepages_2m=512, ports=[PortSpec(speed=200)])]))
    assert len(f) == 2
    assert 200 in f.vocab.values("speeds")
    assert f.positions["b"] == 1


def test_copy_is_independent() -> None:
    f = FleetIndex([host("a")])
    g = f.copy()
    result = nfvplace.place(g, vm(cpu_sets=[cpu_set(0, 4)]))
    g.update_many(result.hosts.values())
    assert int(f.table(CPU).whole[0].sum()) == 8
    assert int(g.table(CPU).whole[0].sum()) == 6


def test_compact_fleet_places_like_the_plain_one() -> None:
    hosts = [host(f"h{i}", nodes=[NodeSpec(cores=3), NodeSpec(cores=3)]) for i in range(6)]
    plain, compact = FleetIndex(hosts), FleetIndex(hosts, compact=True)
    compact.store.hot_size = 2  # type: ignore[union-attr]  # force compress / decompress cycles
    v = vm(cpu_sets=[cpu_set(0, 4, hugepages_1g=1)])
    while True:
        a, b = nfvplace.place(plain, v), nfvplace.place(compact, v)
        assert a.configurations == b.configurations
        if not a.ok:
            assert a.diagnosis is not None
            assert b.diagnosis is not None
            assert a.diagnosis.summary == b.diagnosis.summary
            break
        plain.update_many(a.hosts.values())
        compact.update_many(b.hosts.values())
    assert [compact.hosts[i] for i in range(6)] == [plain.hosts[i] for i in range(6)]
    assert compact.ids == [h.id for h in hosts]


def test_interned_hosts_equal_the_given_ones_and_share_equal_parts() -> None:
    a = host("a", nodes=[NodeSpec(cores=4, ports=[PortSpec(vfs=4)])])
    b = host("b", nodes=[NodeSpec(cores=4, ports=[PortSpec(vfs=4)])])
    f = FleetIndex([a, b])
    fa, fb = f.host("a"), f.host("b")
    assert fa == a
    assert fb == b
    assert fa.model_dump() == a.model_dump()
    # same PU, VF values on both hosts: one object each
    assert fa.numa_nodes[0].cpus[0] is fb.numa_nodes[0].cpus[0]
    vfs_a = fa.numa_nodes[0].nics[0].ports[0].vfs
    assert vfs_a
    assert vfs_a[0] is fb.numa_nodes[0].nics[0].ports[0].vfs[0]
    # a claim on one host leaves the other's shared parts as they were
    result = nfvplace.place(f, vm(cpu_sets=[cpu_set(0, 4)]))
    f.update_many(result.hosts.values())
    assert f.host("b") == b


def test_a_compact_index_keeps_few_hosts_as_objects() -> None:
    hosts = [host(f"h{i}") for i in range(HOT + 8)]
    f = FleetIndex(hosts, compact=True)
    for i in range(len(hosts)):
        f.free(i)  # reads every host, and keeps its view
    assert isinstance(f.store, HostStore)
    assert len(f.store._hot) == HOT
    assert len(f._free) == HOT  # a view holds its host's objects: no more views than hot hosts


def test_a_scheduler_sized_index_keeps_every_view_from_its_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hosts = [host(f"h{i}") for i in range(VIEW_CACHE + 8)]
    f = FleetIndex(hosts)
    assert [f._free[i][0] for i in range(len(hosts))] == list(f.hosts)  # none read anew
    monkeypatch.setattr(fleet, "EVERY_VIEW", VIEW_CACHE)  # a larger fleet keeps the last few
    assert len(FleetIndex(hosts)._free) == VIEW_CACHE


def test_an_unshared_index_keeps_the_hosts_given_and_places_alike() -> None:
    hosts = [host(f"h{i}", nodes=[NodeSpec(cores=3), NodeSpec(cores=3)]) for i in range(3)]
    unshared = FleetIndex(hosts, share=False)
    assert all(a is b for a, b in zip(unshared.hosts, hosts, strict=True))
    assert not any(a is b for a, b in zip(FleetIndex(hosts).hosts, hosts, strict=True))
    wanted = vm(cpu_sets=[cpu_set(0, 4, hugepages_1g=1)])
    assert nfvplace.place(unshared, wanted) == nfvplace.place(FleetIndex(hosts), wanted)


def test_claimed_hosts_refill_their_rows_as_a_fresh_index_would() -> None:
    hosts = [host(f"h{i}", nodes=[NodeSpec(cores=3), NodeSpec(cores=3)]) for i in range(3)]
    f = FleetIndex(hosts)
    result = nfvplace.place(f, vm(cpu_sets=[cpu_set(0, 4, hugepages_1g=1)]))
    f.claimed(result.hosts.values())
    fresh = FleetIndex([result.hosts.get(h.id, h) for h in hosts])
    for kind in (CPU, MEMORY):
        for name, value in vars(f.table(kind)).items():
            assert (value == getattr(fresh.table(kind), name)).all(), name
    assert f.host(next(iter(result.hosts))) is next(iter(result.hosts.values()))


def _columns(index: FleetIndex, name: str) -> dict[str, object]:
    """A kind's columns as plain values (a per-host mapping without its emptied entries)."""
    out: dict[str, object] = {}
    table = index.tables[name]
    for field in dataclasses.fields(table):  # type: ignore[arg-type]
        value = getattr(table, field.name)
        if isinstance(value, np.ndarray):
            out[field.name] = value.tolist()
        else:
            out[field.name] = {k: v for k, v in value.items() if v or not isinstance(v, dict | set)}
    return out


@pytest.mark.parametrize("compact", [False, True])
def test_a_fleet_after_placing_and_releasing_has_the_columns_of_a_fresh_index(
    compact: bool,
) -> None:
    """Every kind's columns, after claims and releases refilled only what changed, are those of
    an index built afresh from the hosts as they are (the realistic mix touches every kind)."""
    placed = nfvplace.Fleet(make_fleet(40, seed=3), compact=compact)
    results = [placed.place(v) for v in request_stream(120, seed=4)]
    assert sum(r.ok for r in results) > 60
    for result in results[::3]:
        placed.release(result)
    fresh = FleetIndex(placed.hosts)
    assert placed.index.tables.keys() == fresh.tables.keys()
    assert all(_columns(fresh, name) for name in fresh.tables)
    for name in fresh.tables:
        assert _columns(placed.index, name) == _columns(fresh, name), name


def test_a_claim_refills_no_capabilities_column_unless_what_they_read_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A claim keeps the processor, hypervisor and memory objects: capabilities' row stays; a new
    version with another processor object (same terms) is read again."""
    hosts = [host(f"h{i}", nodes=[NodeSpec(cores=3), NodeSpec(cores=3)]) for i in range(3)]
    f = FleetIndex(hosts)
    filled: list[str] = []
    original = CAPABILITIES_KIND.fill
    monkeypatch.setattr(
        CAPABILITIES_KIND,
        "fill",
        lambda table, i, h, free, vocab: (filled.append(h.id), original(table, i, h, free, vocab)),
    )
    result = nfvplace.place(f, vm(cpu_sets=[cpu_set(0, 4, hugepages_1g=1)]))
    f.claimed(result.hosts.values())
    assert result.ok
    assert filled == []
    claimed = next(iter(result.hosts.values()))
    faster = claimed.processor.model_copy(update={"frequency_mhz": 9999.0})
    f.claimed([claimed.model_copy(update={"processor": faster})])
    assert filled == [claimed.id]
    assert f.table(CAPABILITIES_KIND).frequency[f.positions[claimed.id]] == 9999.0
