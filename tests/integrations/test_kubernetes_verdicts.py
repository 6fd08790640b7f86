"""Filter's and prioritize's answers over the columns, on a real store: the same as `decide` node
by node, for the worker that stored the objects and for another reading the change feed; kept
per (pod shape, policy) until a node's object changes; nodes with assumed pods counted as
`decide` counts them; nodes with no object decided by `decide`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nfvplace.dialects.k8s_pod import read_pod
from nfvplace.integrations.kubernetes import verdicts as verdicts_module
from nfvplace.integrations.kubernetes.decide import NodeView, decide, pod_shape
from nfvplace.integrations.kubernetes.state import node_state, topology_manager
from nfvplace.integrations.kubernetes.verdicts import verdicts
from nfvplace.models.loading import SourceDocument
from nfvplace.service.routers.hosts import report
from nfvplace.store import Store
from tests.service.kube_api import cnf_pod, nrt

POD = read_pod(cnf_pod(6, "cnf-uid"))[0]
FREE = {"n-0": (16, 16), "n-1": (4, 5), "n-2": (2, 2), "n-3": (8, 0)}


def put(store: Store, name: str, free: tuple[int, int], vfs: tuple[int, int] = (4, 4)) -> None:
    report(store, SourceDocument(data=nrt(name, free, vfs), source=name), name)


def expected(store: Store, names: list[str], assumed: Any, policy: str) -> list[tuple[Any, ...]]:
    out = []
    hosts = store.availability(names)
    for name in names:
        view = None
        if name in hosts:
            generation, chd = hosts[name]
            view = NodeView(
                name, generation, node_state(chd), topology_manager(chd), assumed.get(name, ())
            )
        d = decide(POD, pod_shape(POD), view, name, policy)
        out.append((d.fits, d.score if d.fits else 0, d.reason, d.resolvable))
    return out


def got(store: Store, names: list[str], assumed: Any, policy: str) -> list[tuple[Any, ...]]:
    found, _seen = verdicts(store, POD, names, assumed, policy, False)
    return [
        (bool(found.fits[i]), int(found.score[i]), found.reasons[i], bool(found.resolvable[i]))
        for i in range(len(names))
    ]


@pytest.mark.parametrize("policy", ["pack", "spread", "least-fragmentation"])
def test_the_answers_are_decide_for_every_worker(tmp_path: Path, policy: str) -> None:
    url = f"sqlite:///{tmp_path / 'k8s.db'}"
    writer, reader = Store.open(url), Store.open(url)  # two workers: the PUT's, and another
    for name, free in FREE.items():
        put(writer, name, free)
    names = [*FREE, "unknown"]
    want = expected(writer, names, {}, policy)
    assert [w[0] for w in want] == [True, False, False, True, False]
    assert got(writer, names, {}, policy) == want
    assert got(reader, names, {}, policy) == want
    assert "NUMA node 0: 2 CPUs" in want[2][2]  # the reasons carry the numbers
    put(writer, "n-2", (12, 2))  # the object changed: the rows follow, in both workers
    want = expected(writer, names, {}, policy)
    assert want[2][0] is True
    assert got(reader, names, {}, policy) == want
    assert got(writer, names, {}, policy) == want
    writer.delete_host("n-0")
    want = expected(writer, names, {}, policy)
    assert "no NodeResourceTopology known" in want[0][2]
    assert got(reader, names, {}, policy) == want


def test_assumed_pods_are_counted_as_decide_counts_them(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'k8s.db'}")
    for name, free in FREE.items():
        put(store, name, free)
    assumed = {"n-0": (("other", {"cpu": {0: 12, 1: 12}}),)}
    want = expected(store, list(FREE), assumed, "pack")
    assert want[0][0] is False
    assert want[0][3] is True  # refused only for the assumed pod: resolvable
    assert got(store, list(FREE), assumed, "pack") == want


def test_a_burst_of_equal_pods_is_decided_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'k8s.db'}")
    for name, free in FREE.items():
        put(store, name, free)
    decided: list[int] = []
    original = verdicts_module.decide_rows

    def counting(*args: Any) -> Any:
        decided.append(len(args[3]))
        return original(*args)

    monkeypatch.setattr(verdicts_module, "decide_rows", counting)
    for _ in range(3):
        got(store, list(FREE), {}, "pack")
    assert decided == [4]
    put(store, "n-1", (6, 6))
    got(store, list(FREE), {}, "pack")
    assert decided == [4, 1]  # only the node whose object changed


def test_prioritize_answers_from_what_filter_saw(tmp_path: Path) -> None:
    """A node's new object between filter and prioritize: prioritize scores the node as filter
    decided it (one decision per scheduling cycle); the next cycle sees the new object."""
    store = Store.open(f"sqlite:///{tmp_path / 'k8s.db'}")
    for name, free in FREE.items():
        put(store, name, free)
    names = list(FREE)
    filtered, seen = verdicts(store, POD, names, {}, "pack", False)
    put(store, "n-0", (0, 0))
    put(store, "n-2", (12, 12))
    scored, _ = verdicts(store, POD, names, seen, "pack", False)
    assert scored.fits.tolist() == filtered.fits.tolist() == [True, False, False, True]
    assert scored.score.tolist() == filtered.score.tolist()
    again, _ = verdicts(store, POD, names, {}, "pack", False)
    assert again.fits.tolist() == [False, False, True, True]


def test_a_starting_worker_counts_every_stored_node_before_it_is_asked(tmp_path: Path) -> None:
    """`NodeSource.prime` (a worker's start in a cluster): every stored node gets its row, so the
    first call counts nothing; the answers are decide's."""
    from nfvplace.integrations.kubernetes.columns import NodeSource

    url = f"sqlite:///{tmp_path / 'k8s.db'}"
    writer = Store.open(url)
    for name, free in FREE.items():
        put(writer, name, free)
    source = NodeSource()
    assert source.prime(Store.open(url)) == len(FREE)
    assert sorted(source.table.row_of) == sorted(FREE)
    assert source.prime(Store.open(url)) == 0  # nothing changed since
    put(writer, "n-2", (12, 2))
    assert source.prime(writer) == 1
