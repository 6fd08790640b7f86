"""The summary line and the lazily built rejections."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.hostgen import make_fleet
from nfvplace.placement import FleetIndex
from nfvplace.placement.engine.explain import Reasons, RejectionList, summary_line
from nfvplace.placement.engine.filter import NodeRecord
from nfvplace.placement.reasons import Reason
from nfvplace.placement.resources.filtering import NodeNeed
from nfvplace.placement.result import Diagnosis, Rejection


def test_summary_line_sorted_by_count_then_phrase() -> None:
    counts = Counter({"lack a free VF on a ≥ 25 Gbps port": 40, "have no SMT": 40, "b": 80})
    assert summary_line(120, 0, counts) == (
        "0/120 hosts fit: 80 b, 40 have no SMT, 40 lack a free VF on a ≥ 25 Gbps port"
    )
    assert summary_line(0, 0, Counter()) == "0/0 hosts fit: no host given"


def test_rejections_are_built_once_on_first_access() -> None:
    calls = []

    def build() -> list[Rejection]:
        calls.append(1)
        return [Rejection("h2", "smt", "m", "s"), Rejection("h1", "smt", "m", "s")]

    reasons = Reasons()
    reasons.add("have no SMT", 2, build)
    diagnosis = reasons.diagnosis(2, 0)
    assert calls == []
    assert diagnosis.summary == "0/2 hosts fit: 2 have no SMT"
    assert isinstance(diagnosis.rejections, RejectionList)
    assert [r.host for r in diagnosis.rejections] == ["h1", "h2"]
    assert len(diagnosis.rejections) == 2
    assert calls == [1]
    assert diagnosis.to_dict()["rejections"][0]["host"] == "h1"  # type: ignore[index]


# Each host's rejection for a per-node need, as explain built it host by host (reading numpy one
# element at a time) before it read whole arrays: the messages must stay the same, byte for byte.
def _reference(
    fleet: FleetIndex, record: NodeRecord, hosts: np.ndarray, is_single: bool, key: int
) -> list[Rejection]:
    label = "the VM" if record.cpu_set is None else f"cpu-set {record.cpu_set}"
    out = []
    for i in hosts.tolist():
        slots = [j for j in range(fleet.max_nodes) if fleet.node_id[i, j] >= 0]
        if is_single:
            need = record.needs[key]
            best = max(slots, key=lambda j: float(need.available[i, j]))
            have = float(need.available[i, best])
            message = (
                f"{label} needs {need.phrase}; the best NUMA node "
                f"({int(fleet.node_id[i, best])}) has {have:g} {need.unit}"
            )
            out.append(Rejection(fleet.host_ids[i], "c", message, "p", need.requested, have))
        else:
            chosen = [n for k, n in enumerate(record.needs) if key >> k & 1]
            per_node = "; ".join(
                f"node {int(fleet.node_id[i, j])}: "
                + ", ".join(f"{float(n.available[i, j]):g} {n.unit}" for n in chosen)
                for j in slots
            )
            message = (
                f"{label} needs {' and '.join(n.phrase for n in chosen)} on one NUMA "
                f"node; no node has all ({per_node})"
            )
            out.append(Rejection(fleet.host_ids[i], "c", message, "p"))
    return out


FLEET = FleetIndex(make_fleet(12, seed=3))  # two and four NUMA nodes per host


def _need(data: st.DataObject, k: int) -> NodeNeed:
    shape = FLEET.node_id.shape
    if data.draw(st.booleans(), label=f"need {k} in floats"):
        values = st.floats(0, 1e6, allow_nan=False).map(lambda v: round(v, 2))
        available: np.ndarray = np.array(
            data.draw(st.lists(values, min_size=shape[0] * shape[1], max_size=shape[0] * shape[1]))
        ).reshape(shape)
    else:  # few distinct counts: ties between nodes, where the first node is the best
        counts = st.integers(0, 3)
        available = np.array(
            data.draw(st.lists(counts, min_size=shape[0] * shape[1], max_size=shape[0] * shape[1])),
            dtype=np.int64,
        ).reshape(shape)
    ok = np.zeros(shape, dtype=np.bool_)
    return NodeNeed(Reason.core_pairs, f"{k} phrase", ok, available, 4.0, f"unit {k}")


@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_node_rejections_read_from_arrays_say_what_they_said_element_by_element(
    data: st.DataObject,
) -> None:
    needs = tuple(_need(data, k) for k in range(data.draw(st.integers(1, 3))))
    chosen = data.draw(st.lists(st.integers(0, len(FLEET) - 1), min_size=1, unique=True))
    hosts = np.array(chosen, dtype=np.int64)
    cpu_set = data.draw(st.none() | st.integers(0, 3))
    hit = np.zeros(len(FLEET), dtype=np.bool_)
    hit[hosts] = True
    record = NodeRecord(cpu_set, needs, hit, many_cpu_sets=False)
    is_single = data.draw(st.booleans())
    key = data.draw(
        st.integers(0, len(needs) - 1) if is_single else st.integers(1, 2 ** len(needs) - 1)
    )
    rows_of = Reasons._node_builder(FLEET, record, is_single, key, "p", "c")
    built = [Rejection(*row) for row in rows_of(hosts)]  # rows: a Rejection's fields
    assert built == _reference(FLEET, record, hosts, is_single, key)
    alone = [Rejection(*row) for k in range(len(hosts)) for row in rows_of(hosts[k : k + 1])]
    assert alone == built  # a host built on its own (a pin) reads as in the whole group


def test_rows_and_rejections_say_the_same_and_the_dict_needs_no_rejection() -> None:
    """Builders may give rows (a Rejection's fields): `to_dict` reads them as they are, the
    sequence makes Rejections of them only when read, and both sort by host alike."""

    def rows() -> list[tuple[str, str, str, str, float | None, float | None, str]]:
        return [
            ("h3", Reason.smt, "m3", "s", 2.0, 0.0, "filter"),
            ("h1", "x", "m1", "s", None, None, "solve"),
        ]

    def objects() -> list[Rejection]:
        return [Rejection("h2", Reason.smt, "m2", "s")]

    reasons = Reasons()
    reasons.add("have no SMT", 2, rows)
    reasons.add("other", 1, objects)
    lazy = reasons.diagnosis(3, 0)
    assert isinstance(lazy.rejections, RejectionList)
    document = lazy.to_dict()
    assert lazy.rejections._items is None  # the dict made no Rejection
    plain = Diagnosis(3, 0, tuple(lazy.rejections), lazy.summary)  # now they are made
    assert [r.host for r in lazy.rejections] == ["h1", "h2", "h3"]
    assert lazy.rejections[2] == Rejection("h3", Reason.smt, "m3", "s", 2.0, 0.0)
    assert document == plain.to_dict()
    reasons_given = [r["reason"] for r in document["rejections"]]  # type: ignore[index]
    assert reasons_given == ["x", "smt", "smt"]
    assert all(type(r) is str for r in reasons_given)  # an enum member is slow to encode
