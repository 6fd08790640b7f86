"""A claim applied to the index from its configuration (`FreeClaimed`) leaves the index exactly as
reading the claimed hosts would: after any sequence of placements and releases, on the realistic
mix and on fuzzed hosts, every column equals a freshly built index's, every host's free resources
equal `free_of` of its descriptor, and the descriptors, the configurations and every decision are
those of an index that reads each claimed host again (the path without configurations)."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_differential import chds, vmds

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.claims import release
from nfvplace.errors import LintError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex, PlacementResult
from nfvplace.placement.index import free_of
from nfvplace.placement.index.free import free_claimed
from nfvplace.placement.resources.cpu import CPU
from nfvplace.placement.resources.impact import IMPACT
from nfvplace.placement.resources.memory import MEMORY

SETTINGS = settings(
    max_examples=int(os.environ.get("NFVPLACE_DELTA_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
MIX = make_fleet(12, seed=21)
REQUESTS = request_stream(40, seed=22)


def _same_columns(index: FleetIndex, fresh: FleetIndex) -> None:
    """Every table and column of `index` equal to `fresh`'s, exactly (a per-host mapping
    without the entries a release emptied)."""
    assert index.tables.keys() == fresh.tables.keys()
    assert np.array_equal(index.node_id, fresh.node_id)
    assert np.array_equal(index.tiebreak, fresh.tiebreak)
    for name, table in fresh.tables.items():
        assert _plain(index.tables[name]) == _plain(table), name


def _plain(table: object) -> dict[str, object]:
    """A table's columns as plain values, a per-host mapping without its emptied entries."""
    out: dict[str, object] = {}
    for field in dataclasses.fields(table):  # type: ignore[arg-type]
        value = getattr(table, field.name)
        if isinstance(value, np.ndarray):
            out[field.name] = (str(value.dtype), value.tolist())
        else:
            out[field.name] = {k: v for k, v in value.items() if v or not isinstance(v, dict | set)}
    return out


def _same_free(index: FleetIndex) -> None:
    """The free resources the index keeps of each host equal those read from its descriptor (the
    version they are kept for is the host's: its descriptor, or the claims pending on it)."""
    for i, (version, free) in index._free.items():
        assert version is index.version(i)
        assert free == free_of(index.hosts[i]), index.host_ids[i]


def _same_result(got: PlacementResult, want: PlacementResult) -> None:
    assert got.configurations == want.configurations
    assert got.hosts.keys() == want.hosts.keys()
    for host_id, host in got.hosts.items():
        assert host == want.hosts[host_id]
        assert host.model_dump_json() == want.hosts[host_id].model_dump_json()


def _run(hosts: list[ComputeHostDescriptor], steps: list[tuple[VmDescriptor, int]]) -> None:
    """Place each VM in turn (and release an earlier placement where a step says so) through
    `Fleet` (the claim's configuration hands the index its delta) and through an index that
    reads every claimed host again; both must agree at every step."""
    fleet = nfvplace.Fleet(hosts)
    reader = FleetIndex(hosts)
    placed: list[PlacementResult] = []
    for vm, undo in steps:
        try:
            result = fleet.place(vm)
        except LintError:
            continue
        read = nfvplace.place(reader, vm)
        reader.claimed(read.hosts.values())
        _same_result(result, read)
        if result.ok:
            placed.append(result)
        if undo and placed:
            gone = placed.pop(undo % len(placed))
            fleet.release(gone)
            for config in gone.configurations:
                reader.claimed([release(reader.host(config.host), config)])
        _same_free(fleet.index)
    assert fleet.hosts == list(reader.hosts)
    assert [h.model_dump_json() for h in fleet.hosts] == [h.model_dump_json() for h in reader.hosts]
    _same_columns(fleet.index, FleetIndex(fleet.hosts))
    _same_columns(reader, FleetIndex(fleet.hosts))


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(REQUESTS), st.integers(0, 6)), min_size=1, max_size=25))
def test_the_realistic_mix_claimed_from_configurations_is_the_mix_read_again(
    steps: list[tuple[VmDescriptor, int]],
) -> None:
    _run(MIX, [(vm, release if release > 4 else 0) for vm, release in steps])


@SETTINGS
@given(
    st.lists(chds("h"), min_size=1, max_size=3),
    st.lists(st.tuples(vmds(), st.integers(0, 4)), min_size=1, max_size=8),
)
def test_fuzzed_hosts_claimed_from_configurations_are_the_hosts_read_again(
    hosts: list[ComputeHostDescriptor], steps: list[tuple[VmDescriptor, int]]
) -> None:
    named = [h.model_copy(update={"id": f"h{k}"}) for k, h in enumerate(hosts)]
    _run(named, [(vm, release if release > 2 else 0) for vm, release in steps])


def test_a_claim_worked_out_from_its_configuration_is_the_claimed_host_read_again() -> None:
    """Host by host on the mix: the delta of every kind equals `free_of` of the claimed host, the
    cpu and memory kinds work their parts out without reading it (a pinned VM breaks whole cores,
    takes pages and memory; a floating one takes free PUs as shared), and impact counts the
    instance a claim adds as `fill` would."""
    fleet = nfvplace.Fleet(make_fleet(30, seed=5))
    worked = counted_memory = floated = 0
    for vm in request_stream(60, seed=6):
        index = fleet.index
        result = nfvplace.place(index, vm)
        for config in result.configurations:
            i = index.positions[config.host]
            before = (index.hosts[i], index.free(i))
            host = result.hosts[config.host]
            assert free_claimed(host, before, config) == free_of(host)
            cpu = CPU.free_claimed(before[0], before[1].of(CPU), config, host)
            if config.held_cpus and not config.floating_cpus:
                assert cpu is not None
                worked += 1
            floated += bool(config.floating_cpus) and cpu is not None
            if MEMORY.free_claimed(before[0], before[1].of(MEMORY), config, host) is not None:
                counted_memory += 1
            counted, filled = index.table(IMPACT).copy(), index.table(IMPACT).copy()
            assert IMPACT.columns_claimed(counted, i, host, before[0], config)
            IMPACT.fill(filled, i, host, free_of(host), index.vocab)
            assert _plain(counted) == _plain(filled)
        fleet.index.claimed(result.hosts.values(), result.configurations)
    assert worked > 20
    assert floated > 3
    assert counted_memory > 20
