"""A claim kept pending (`index/pending.py`): the index and the result build a claimed host only
when it is read, and what is read is what claiming at once gives. After any sequence of
placements, releases, copies, pickles, reads and dry runs, every host of the index equals the host
an index claiming each placement at once holds, every result's host equals `claims.claim` of the
host it was placed on, the columns equal a fresh index's, and a dry run changes nothing. The
hosts and requests cover floating vCPUs (shared VMs, floating cpu-sets) and vBRAS-like requests
(two cpu-sets on distinct nodes, bandwidth between them, over links the host describes). A claim
that would conflict is not kept pending: it is claimed at once, and refused. A result's host built
and adopted by the index (`FleetIndex.adopt`, as the service's write-back does) folds the row's
chain when the row is still that result's, and changes nothing otherwise."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.claims import ClaimConflictError, claim, claim_all, release
from nfvplace.errors import LintError
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.vmd import ProcessorRequirements, VmDescriptor
from nfvplace.placement import FleetIndex, PlacementResult
from nfvplace.placement.engine import attempt
from nfvplace.placement.index import claimed_alone, free_of
from nfvplace.placement.index.pending import ClaimedHosts, PendingClaims, free_pending
from nfvplace.placement.reasons import Reason

from .test_claimed_deltas import SETTINGS, _plain, _same_columns
from .test_lazy import _read_every_table
from .test_pending_deltas import floating_vm, linked, pooled

MIX = [linked(pooled(h)) if k % 2 else h for k, h in enumerate(make_fleet(12, seed=41))]
REQUESTS = [
    *request_stream(40, seed=42),
    floating_vm("fl-a"),
    floating_vm("fl-b", 400, (1, 1)),
    floating_vm("fl-c", 0, (3, 2)),
]
OPS = ("place", "place", "place", "place", "release", "copy", "read", "pickle", "dry", "adopt")


def _placed(index: FleetIndex, vm: VmDescriptor) -> PlacementResult:
    """`Fleet.place` on `index`: the engine, and the index takes what it claimed."""
    result = nfvplace.place(index, vm)
    index.take(result.hosts, claimed_alone(vm, {}, result.configurations))
    return result


def _eager(reader: FleetIndex, vm: VmDescriptor) -> PlacementResult:
    """The same placement on an index that claims at once: each result's host is checked against
    `claims.claim` of the host it was placed on, and the index reads the claimed hosts."""
    result = nfvplace.place(reader, vm)
    claimed = []
    for config in result.configurations:
        want = claim(reader.host(config.host), config)
        assert result.hosts[config.host] == want
        assert result.hosts[config.host].model_dump_json() == want.model_dump_json()
        claimed.append(want)
    reader.claimed(claimed)
    return result


def _state(
    index: FleetIndex,
) -> tuple[list[object], dict[str, dict[str, object]], dict[int, PendingClaims]]:
    return (
        [index.version(i) for i in range(len(index))],
        {name: _plain(table) for name, table in index.tables.items()},
        dict(index.pending),
    )


def _same_hosts(index: FleetIndex, reader: FleetIndex) -> None:
    assert list(index.hosts) == list(reader.hosts)
    assert [h.model_dump_json() for h in index.hosts] == [h.model_dump_json() for h in reader.hosts]


def _step(
    index: FleetIndex,
    reader: FleetIndex,
    step: tuple[str, VmDescriptor, int],
    placed: list[VmConfiguration],
    made: list[PlacementResult],
) -> FleetIndex:
    """One operation on the index kept pending (and its twin on the reader); the index to go on
    with (a copy, or a pickled one, continues in place of the one it came from)."""
    op, vm, k = step
    if op == "copy":
        clone, hosts = index.copy(), list(reader.hosts)
        got, want = _placed(clone, vm), _eager(reader, vm)
        assert got.configurations == want.configurations
        placed.extend(got.configurations)
        assert list(index.hosts) == hosts  # the original as it was
        return clone
    if op == "pickle":
        return pickle.loads(pickle.dumps(index))  # type: ignore[no-any-return]
    if op == "read":
        i = k % len(index)
        assert index.hosts[i] == reader.hosts[i]
        return index
    if op == "dry":
        before = _state(index)
        nfvplace.place(index, vm)
        after = _state(index)
        assert after[0] == before[0]  # the pure core: nothing taken (a lazy index may fill more)
        assert {name: after[1][name] for name in before[1]} == before[1]
        assert after[2] == before[2]
        return index
    if op == "adopt":
        if made:
            _adopt(index, made[k % len(made)])
        return index
    if op == "release":
        if placed:
            config = placed.pop(k % len(placed))
            index.claimed([release(index.host(config.host), config)])
            reader.claimed([release(reader.host(config.host), config)])
        return index
    got, want = _placed(index, vm), _eager(reader, vm)
    assert got.configurations == want.configurations
    placed.extend(got.configurations)
    made.append(got)
    return index


def _adopt(index: FleetIndex, result: PlacementResult) -> None:
    """What the service's write-back does with a result it owes: its hosts built, and adopted."""
    if not isinstance(result.hosts, ClaimedHosts):
        return  # refused: nothing claimed
    for host_id in result.hosts:
        claim_made = result.hosts.claim(host_id)
        if claim_made is not None:
            index.adopt(claim_made, result.hosts[host_id])


@SETTINGS
@given(
    st.lists(
        st.tuples(st.sampled_from(OPS), st.sampled_from(REQUESTS), st.integers(0, 50)),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from(["plain", "compact", "lazy"]),
)
def test_claims_kept_pending_read_as_the_claims_made_at_once(
    steps: list[tuple[str, VmDescriptor, int]], kind: str
) -> None:
    index = FleetIndex(MIX, compact=kind == "compact", lazy=kind == "lazy")
    reader = FleetIndex(MIX)
    placed: list[VmConfiguration] = []
    made: list[PlacementResult] = []
    for step in steps:
        try:
            index = _step(index, reader, step, placed, made)
        except LintError:
            continue
    for i, (version, free) in index._free.items():
        if version is index.version(i):  # (a compact index's may be of the host as given)
            assert free == free_of(index.hosts[i])
    _same_hosts(index, reader)
    _read_every_table(index)  # a lazy index fills them now, with claims pending
    _same_columns(index, FleetIndex(list(index.hosts)))


def test_the_mix_keeps_most_claims_pending_and_builds_none_unread() -> None:
    """On the realistic mix (pack), a Fleet's placements leave hosts with several claims pending,
    nothing built, until a host is read: then it is the host claimed at once."""
    fleet, reader = nfvplace.Fleet(make_fleet(40, seed=43)), FleetIndex(make_fleet(40, seed=43))
    for vm in request_stream(80, seed=44):
        result = fleet.place(vm)
        _eager(reader, vm)
        assert not result.ok or isinstance(result.hosts, ClaimedHosts)
    pending = fleet.index.pending
    assert sum(len(p.configs) for p in pending.values()) > 20
    assert max(len(p.configs) for p in pending.values()) > 2
    assert all(p.built is None for p in pending.values())
    assert fleet.hosts == list(reader.hosts)
    assert all(p.built is not None for p in pending.values())


def _pending_on(fleet: nfvplace.Fleet, kind: str) -> tuple[int, VmConfiguration]:
    """Place the first VM of `kind` in the mix whose claim is kept pending."""
    for vm in request_stream(60, seed=46):
        if not vm.name.startswith(kind):
            continue
        config = fleet.place(vm).configuration
        i = fleet.index.positions[config.host]
        if isinstance(fleet.index.pending.get(i), PendingClaims):
            return i, config
    raise AssertionError(f"no {kind} claim kept pending")


CONFLICTS = {
    "sriov VF and pinned PUs": "sriov",
    "pinned PUs and hugepages": "cloud",
    "the VFs of a vRAN unit": "vran",
    "the pinned PUs of a vBRAS worker's two cpu-sets": "vbras",
}


@pytest.mark.parametrize("kind", ["cloud", "vbras"])
def test_floating_vms_and_vbras_are_kept_pending(kind: str) -> None:
    """Shared VMs (their shared PUs and memory) and vBRAS workers (bandwidth between their
    cpu-sets) are kept pending, and read as claimed at once."""
    fleet = nfvplace.Fleet([linked(h) for h in make_fleet(10, seed=45)])
    i, config = _pending_on(fleet, kind)
    base, pending = fleet.index.held(i)
    assert config in pending
    assert fleet.index.hosts[i] == claim_all(base, pending)[0]


def test_a_vm_asking_for_an_architecture_builds_no_pending_claim() -> None:
    """The architecture is read from the descriptors held (no claim writes the processor)."""
    hosts = [
        h.model_copy(
            update={"processor": h.processor.model_copy(update={"architecture": "x86_64"})}
        )
        for h in make_fleet(20, seed=51)
    ]
    fleet = nfvplace.Fleet(hosts)
    for vm in request_stream(30, seed=52):
        fleet.place(vm)
    assert fleet.index.pending
    vm = request_stream(1, seed=53)[0]
    arch = vm.model_copy(update={"processor": ProcessorRequirements(architecture="x86_64")})
    assert nfvplace.place(fleet.index, arch).ok
    assert all(p.built is None for p in fleet.index.pending.values())
    other = vm.model_copy(update={"processor": ProcessorRequirements(architecture="aarch64")})
    result = nfvplace.place(fleet.index, other)
    assert not result.ok
    assert all(p.built is None for p in fleet.index.pending.values())


@pytest.mark.parametrize("kind", CONFLICTS.values(), ids=list(CONFLICTS))
def test_a_claim_on_what_a_pending_claim_took_is_not_kept_pending(kind: str) -> None:
    """The same resources again (another owner) on the host as the pending claims left it: the
    kinds prove nothing (`free_pending` is None) and claiming on the built host conflicts."""
    fleet = nfvplace.Fleet(make_fleet(10, seed=45))
    i, config = _pending_on(fleet, kind)
    again = config.model_copy(update={"instance": "someone-else"})
    base, _ = fleet.index.held(i)
    assert free_pending(base, fleet.index.free(i), again) is None
    with pytest.raises(ClaimConflictError):
        claim(fleet.index.hosts[i], again)


def test_a_conflicting_claim_is_refused_at_placement_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A configuration the ids stage got wrong (here: what a pending claim holds already) is
    refused at placement (`Reason.claim`), and the index keeps what it had."""
    fleet = nfvplace.Fleet(make_fleet(1, seed=47))
    i, config = _pending_on(fleet, "sriov")
    vm = config.descriptor
    before = (fleet.index.version(i), _plain(fleet.index.tables["nics"]))
    wrong = config.model_copy(update={"instance": "twin"})
    monkeypatch.setattr(attempt, "build_configuration", lambda *args: wrong)
    result = fleet.place(vm)
    assert not result.ok
    assert result.diagnosis is not None
    assert {r.reason for r in result.diagnosis.rejections} == {Reason.claim}
    assert (fleet.index.version(i), _plain(fleet.index.tables["nics"])) == before


def test_a_result_pickled_holds_its_hosts() -> None:
    fleet = nfvplace.Fleet(make_fleet(6, seed=49))
    result = fleet.place(request_stream(5, seed=50)[0])
    copy = pickle.loads(pickle.dumps(result))
    assert type(copy.hosts) is dict
    assert copy == result
    assert copy.hosts == {result.configuration.host: fleet.host(result.configuration.host)}


def test_a_lazy_index_fills_a_kind_first_read_with_the_claims_pending() -> None:
    """A kind whose columns a lazy index fills after claims were kept pending (impact: no VM of
    the mix asks for it) counts the instances they add, as a fresh index of the hosts does."""
    index = FleetIndex(MIX, lazy=True)
    for vm in REQUESTS[:15]:
        _placed(index, vm)
    assert index.pending
    assert "impact" not in index.tables
    _read_every_table(index)
    _same_columns(index, FleetIndex(list(index.hosts)))


def test_a_built_result_adopted_folds_its_row_chain_and_an_older_one_does_not() -> None:
    index = FleetIndex(make_fleet(1, seed=2))  # one host, which takes all three
    vms = [vm for vm in request_stream(80, seed=42) if vm.name.startswith("sriov")][:3]
    first = _placed(index, vms[0])
    (host_id,) = first.hosts
    i = index.positions[host_id]
    second = _placed(index, vms[1])
    assert set(second.hosts) == {host_id}
    view = index.free(i)
    _adopt(index, first)  # the row moved on since: nothing changes
    assert len(index.pending[i].configs) == 2
    _adopt(index, second)
    assert i not in index.pending
    assert index.host_at(i) is second.hosts[host_id]
    assert index.free(i) is view  # the same host: its view kept
    third = _placed(index, vms[2])
    made = third.hosts.claim(host_id) if isinstance(third.hosts, ClaimedHosts) else None
    assert made is not None
    assert made.base is second.hosts[host_id]
    assert len(made.configs) == 1
    assert third.hosts[host_id] == claim(second.hosts[host_id], third.configurations[0])
