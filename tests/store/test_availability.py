"""Commits write claim rows only; a host's availability is its stored document with the placements
committed since claimed (nfvplace/store/availability.py), on SQLite and PostgreSQL."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from service_hosts import host
from stored import commit, config, generations

from nfvplace.claims import claim, claim_all
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.store import Store
from nfvplace.store import availability as availability_module
from nfvplace.store import placements as placements_module
from nfvplace.store import repository as repository_module
from nfvplace.store.audit import _normal
from nfvplace.store.records import HOSTS

# configurations that can all be live at once on host("h1"): PUs, VFs and 1 GiB pages of node 0
CONFIGS = [([1, 2], "0000:18:02.0"), ([3, 4], "0000:18:02.1"), ([5, 6], None), ([7], None)]


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    yield opened
    opened.close()


def row(store: Store, host_id: str = "h1") -> dict[str, int]:
    generation, written = generations(store, host_id)
    return {"generation": generation, "available_generation": written}


def reported() -> ComputeHostDescriptor:
    return ComputeHostDescriptor.model_validate(host("h1"))


def claimed(configs: list[VmConfiguration], name: str = "h1") -> dict[str, Any]:
    """What the commits of before wrote: the report with each configuration claimed in turn."""
    chd = ComputeHostDescriptor.model_validate(host(name))
    for c in configs:
        chd = claim(chd, c)
    return chd.model_dump(mode="json", by_alias=True)


def test_commits_leave_the_document_behind_and_reads_claim_what_is_recent(store: Store) -> None:
    store.put_host(reported())
    configs = [config(f"p{k}/vm", pus, vf) for k, (pus, vf) in enumerate(CONFIGS[:3])]
    for k, c in enumerate(configs):
        commit(store, f"p{k}", [c])
    state = row(store)
    assert (state["generation"], state["available_generation"]) == (4, 1)  # written at the report
    record = store.get_host("h1")
    assert record is not None
    assert record.generation == 4
    assert record.availability == claimed(configs)
    assert store.list_hosts()[0].availability == claimed(configs)
    generation, chd = store.availability(["h1"])["h1"]
    assert generation == 4
    assert chd.model_dump(mode="json", by_alias=True) == claimed(configs)
    assert store.audit() == []


def test_only_commits_since_a_generation_are_claimed_on_the_holders_copy(store: Store) -> None:
    """`committed_since`: a host only live commits moved on since the generation a reader holds
    it at gives those commits' configurations, which claimed on the reader's copy are the host as
    read whole; a release or a report since, or a host gone, leaves it out (read it whole)."""
    store.put_host(reported())
    store.put_host(ComputeHostDescriptor.model_validate(host("h2")))
    configs = [config(f"p{k}/vm", pus, vf) for k, (pus, vf) in enumerate(CONFIGS[:3])]
    commit(store, "p0", [configs[0]])
    held_at, held = store.availability(["h1"])["h1"]  # a reader's copy at generation 2
    for k in (1, 2):
        commit(store, f"p{k}", [configs[k]])
    moved = store.committed_since({"h1": held_at, "h2": 1, "gone": 1})
    assert moved == {"h1": (4, configs[1:]), "h2": (1, [])}
    generation, whole = store.availability(["h1"])["h1"]
    assert generation == 4
    assert claim_all(held, moved["h1"][1])[0] == whole
    assert store.release_placement("p1")  # a generation no live commit made
    assert store.committed_since({"h1": held_at}) == {}
    assert store.committed_since({"h1": 5}) == {"h1": (5, [])}  # nothing since
    store.put_host(reported())
    assert store.committed_since({"h1": 5}) == {}


def test_catch_up_writes_the_same_document_back_and_changes_nothing_else(store: Store) -> None:
    store.put_host(reported())
    configs = [config(f"p{k}/vm", pus, vf) for k, (pus, vf) in enumerate(CONFIGS[:2])]
    for k, c in enumerate(configs):
        commit(store, f"p{k}", [c])
    seq = store.changes_since(-1).seq
    before = store.get_host("h1")
    assert store.catch_up(10) == 1
    assert store.catch_up(10) == 0  # nothing behind any more
    assert row(store) == {"generation": 3, "available_generation": 3}
    assert store.get_host("h1") == before
    assert store.changes_since(seq).hosts == {}  # workers have nothing to read again
    commit(store, "p2", [config("p2/vm", *CONFIGS[2])])  # claimed on the written-back document
    after = store.get_host("h1")
    assert after is not None
    assert after.availability == claimed([*configs, config("p2/vm", *CONFIGS[2])])
    assert store.audit() == []


def test_catch_up_writes_its_document_though_the_host_changed_meanwhile(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put_host(reported())
    commit(store, "p0", [config("p0/vm", *CONFIGS[0])])
    real = availability_module.chd_json

    def commit_meanwhile(chd: ComputeHostDescriptor) -> Any:
        monkeypatch.setattr(availability_module, "chd_json", real)
        commit(store, "p1", [config("p1/vm", *CONFIGS[1])])  # after the read, before the write
        return real(chd)

    monkeypatch.setattr(availability_module, "chd_json", commit_meanwhile)
    # exact at generation 2, the host at 3: still newer than the stored document (1), so written;
    # p1 is claimed on it when the host is read
    assert store.catch_up(10) == 1
    assert row(store) == {"generation": 3, "available_generation": 2}
    both = [config("p0/vm", *CONFIGS[0]), config("p1/vm", *CONFIGS[1])]
    record = store.get_host("h1")
    assert record is not None
    assert record.availability == claimed(both)
    assert store.audit() == []


def test_releases_and_reports_fold_the_document_right_after(store: Store) -> None:
    store.put_host(reported())
    commit(store, "p0", [config("p0/vm", *CONFIGS[0])])
    commit(store, "p1", [config("p1/vm", *CONFIGS[1])])
    assert store.release_placement("p0")
    assert row(store) == {"generation": 4, "available_generation": 4}
    commit(store, "p2", [config("p2/vm", *CONFIGS[2])])
    store.put_host(reported())
    assert row(store) == {"generation": 6, "available_generation": 6}
    assert store.audit() == []


def test_a_stale_document_is_reported_by_the_audit(store: Store) -> None:
    store.put_host(reported())
    commit(store, "p0", [config("p0/vm", *CONFIGS[0])])
    with store.engine.begin() as conn:  # a document said exact at generation 2 without p0
        conn.execute(HOSTS.update().values(available_generation=2))
    assert store.audit() == [
        "host h1: availability differs from CHD + live claims",
        "host h1: stored availability differs from CHD + live claims",
    ]
    with store.engine.begin() as conn:
        conn.execute(HOSTS.update().values(available_generation=3))
    assert store.audit() == ["host h1: availability ahead of the host's generation"]


@contextmanager
def unfolded() -> Iterator[None]:
    """Releases whose fold never runs (the process died right after their transaction), and
    reports that leave the document as it was (a document that is behind a report, however it
    came to be): `hosts.available` stays as it was."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(placements_module, "fold", lambda _engine, _ids: 0)
        patch.setattr(repository_module, "write_back_on", lambda _conn, _documents: 0)
        yield


def test_a_release_never_folded_is_read_from_the_report_and_the_live_placements(
    store: Store,
) -> None:
    """The document holds p0 and p1 is committed after it; p0's release is not folded. Claiming
    what was committed since on the document would still show p0 held: the host is derived again
    from its report and the placements still live, until a fold writes it."""
    store.put_host(reported())
    p0, p1, p2 = (config(f"p{k}/vm", *CONFIGS[k]) for k in range(3))
    commit(store, "p0", [p0])
    assert store.catch_up(10) == 1  # the document holds p0, exact at generation 2
    commit(store, "p1", [p1])
    with unfolded():
        assert store.release_placement("p0")
    assert row(store) == {"generation": 4, "available_generation": 2}
    record = store.get_host("h1")
    assert record is not None
    assert _normal(dict(record.availability)) == _normal(claimed([p1]))
    assert _normal(store.snapshot().hosts["h1"].model_dump(mode="json", by_alias=True)) == _normal(
        claimed([p1])
    )
    assert store.audit() == []
    commit(store, "p2", [p2])  # committed on the host as read: p0's units are free again
    with unfolded():
        assert store.put_host(reported()).conflicts == ()
    assert row(store) == {"generation": 6, "available_generation": 2}
    assert store.audit() == []
    assert store.catch_up(10) == 1  # the upkeep folds it
    assert row(store) == {"generation": 6, "available_generation": 6}
    record = store.get_host("h1")
    assert record is not None
    assert _normal(dict(record.availability)) == _normal(claimed([p1, p2]))
    assert store.audit() == []


OPS = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["commit", "release"]), st.integers(0, len(CONFIGS) - 1), st.booleans()
        ),
        st.tuples(st.sampled_from(["catch up", "report"]), st.just(0), st.booleans()),
    ),
    max_size=14,
)


def written(store: Store, live: dict[int, str], n: int, op: str, k: int) -> bool:
    """Write the `n`th of `OPS` (`live`: the placements committed and not released, by config);
    whether it moved the host otherwise than by a commit (a release or a report)."""
    if op == "commit" and k not in live:
        live[k] = f"p{n}"
        commit(store, live[k], [config(f"p{n}/vm", *CONFIGS[k])])
    elif op == "release" and k in live:
        assert store.release_placement(live.pop(k))
        return True
    elif op == "catch up":
        store.catch_up(10)
    elif op == "report":
        assert store.put_host(reported()).conflicts == ()
        return True
    return False


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_reads_equal_every_live_claim_whatever_the_order_of_writes(
    ops: list[tuple[str, int, bool]],
) -> None:
    """Any mix of commits, releases, write-backs and reports, the releases' and reports' folds run
    or not: the availability read (and the stored one, once exact) is the report with every live
    placement claimed (the audit)."""
    folder = Path(tempfile.mkdtemp(prefix="current-"))
    store = Store.open(f"sqlite:///{folder}/{uuid.uuid4().hex}.db")
    try:
        store.put_host(reported())
        live: dict[int, str] = {}
        for n, (op, k, folded) in enumerate(ops):
            with nullcontext() if folded else unfolded():
                written(store, live, n, op, k)
            assert store.audit() == []
        record = store.get_host("h1")
        assert record is not None
        in_order = [config(f"{live[k]}/vm", *CONFIGS[k]) for k in sorted(live, key=live.get)]
        assert _normal(dict(record.availability)) == _normal(claimed(in_order))
    finally:
        store.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_a_copy_brought_up_by_the_commits_since_equals_a_whole_read(
    ops: list[tuple[str, int, bool]],
) -> None:
    """A reader's copy of the host taken after any write, brought up to date by what
    `committed_since` gives, is the host as read whole; it is given whenever only commits came
    since the copy (and never after a release or a report)."""
    folder = Path(tempfile.mkdtemp(prefix="since-"))
    store = Store.open(f"sqlite:///{folder}/{uuid.uuid4().hex}.db")
    try:
        store.put_host(reported())
        live: dict[int, str] = {}
        copies: list[tuple[int, ComputeHostDescriptor, bool]] = []  # generation, copy, commits only
        for n, (op, k, folded) in enumerate(ops):
            copies.append((*store.availability(["h1"])["h1"], True))
            with nullcontext() if folded else unfolded():
                if written(store, live, n, op, k):
                    copies = [(g, copy, False) for g, copy, _only in copies]
        generation, whole = store.availability(["h1"])["h1"]
        for held_at, copy, commits_only in copies:
            moved = store.committed_since({"h1": held_at})
            assert ("h1" in moved) is commits_only
            if commits_only:
                assert moved["h1"][0] == generation
                assert claim_all(copy, moved["h1"][1])[0] == whole
    finally:
        store.close()


def test_hosts_read_together_each_claim_only_their_own_window(store: Store) -> None:
    """Hosts behind by different amounts (one exact, one caught up part way, one never written
    back) read in one query each get their own placements since their own document."""
    names = ["h1", "h2", "h3"]
    for name in names:
        store.put_host(ComputeHostDescriptor.model_validate(host(name)))
    on: dict[str, list[VmConfiguration]] = {name: [] for name in names}

    def place(name: str, k: int) -> None:
        c = config(f"{name}-p{k}/vm", *CONFIGS[k]).model_copy(update={"host": name})
        commit(store, f"{name}-p{k}", [c])
        on[name].append(c)

    for k in range(2):
        for name in names:
            place(name, k)
    store.write_back([("h2", 3, ComputeHostDescriptor.model_validate(claimed(on["h2"], "h2")))])
    for name in names:
        place(name, 2)
    store.write_back([("h1", 4, ComputeHostDescriptor.model_validate(claimed(on["h1"], "h1")))])
    assert {
        r.id: (r.generation, row(store, r.id)["available_generation"]) for r in store.list_hosts()
    } == {
        "h1": (4, 4),
        "h2": (4, 3),
        "h3": (4, 1),
    }
    snapshot = store.snapshot()
    for name in names:
        assert snapshot.hosts[name].model_dump(mode="json", by_alias=True) == claimed(
            on[name], name
        )
    assert store.audit() == []


def test_a_downgrade_writes_every_document_up_to_date_first(store: Store) -> None:
    """Revisions before 0006 read `available` as exact: going back to one claims what was
    committed since on every document that is behind, then drops the columns."""
    import json

    from alembic import command
    from sqlalchemy import inspect, text

    from nfvplace.store.db import alembic_config, migrate

    store.put_host(reported())
    configs = [config(f"p{k}/vm", pus, vf) for k, (pus, vf) in enumerate(CONFIGS[:2])]
    for k, c in enumerate(configs):
        commit(store, f"p{k}", [c])
    assert row(store) == {"generation": 3, "available_generation": 1}
    with store.engine.begin() as connection:
        settings = alembic_config(store.engine.url.render_as_string(hide_password=False))
        settings.attributes["connection"] = connection
        command.downgrade(settings, "0005")
    with store.engine.connect() as conn:
        assert "available_generation" not in {c["name"] for c in inspect(conn).get_columns("hosts")}
        document = conn.execute(text("SELECT available FROM hosts WHERE id = 'h1'")).scalar_one()
    stored = json.loads(document) if isinstance(document, str) else document
    assert _normal(stored) == _normal(claimed(configs))
    migrate(store.engine)  # and up again: every document exact
    assert row(store) == {"generation": 3, "available_generation": 3}
    assert store.audit() == []
