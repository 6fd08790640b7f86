"""Hosts whose PUs and VFs come as columns (`nfvplace/service/host_columns.py`): read into the
same model their rows give, answered as their rows are, and refused as their rows are (or, when
the columns stand for no rows, with a finding naming the column)."""

from __future__ import annotations

import gzip
import json
import random
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from service_support import auth

from bench.hostgen import make_fleet
from bench.nova_candidates import host
from nfvplace.integrations.nova.client import digest
from nfvplace.integrations.nova.hosts import chd_of, isolate_refused
from nfvplace.integrations.nova.reach import host_wide
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.service import host_columns

VM = {
    "flavor": {"name": "p2", "vcpus": 2, "ram": 2048, "extra_specs": {"hw:cpu_policy": "dedicated"}}
}


def _wire(chd: dict[str, Any]) -> dict[str, Any]:
    """The CHD as the service reads it off the wire (tuples as lists)."""
    read: dict[str, Any] = json.loads(json.dumps(chd))
    return read


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), wide=st.booleans(), isolate=st.booleans())
def test_the_columns_read_into_the_model_of_their_rows(
    seed: int, wide: bool, isolate: bool
) -> None:
    view = host(random.Random(seed), f"h-{seed}")
    view = host_wide(view) if wide else view
    closed = isolate_refused(view) if isolate else None
    model = host_columns.model_of(_wire(chd_of(view, closed, columns=True)))
    expected = ComputeHostDescriptor.model_validate(chd_of(view, closed))
    assert model == expected
    assert model is not None
    assert model.model_dump_json() == expected.model_dump_json()


def test_the_rows_kept_are_bounded_and_forgetting_them_changes_no_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(host_columns, "KEPT_ROWS", 50)
    host_columns.forget()
    for seed in range(4):
        view = host(random.Random(seed), f"b-{seed}")
        model = host_columns.model_of(_wire(chd_of(view, columns=True)))
        assert model == ComputeHostDescriptor.model_validate(chd_of(view))
        assert host_columns.kept_rows() <= 50


def test_refused_columns_keep_nothing() -> None:
    """What is kept is rows that were valid: columns refused leave no layout or template behind
    (a client sending bad hosts again and again grows nothing)."""
    host_columns.forget()
    chd = _columns_host(lambda cpus: cpus["templates"][0].__setitem__("state", "busy"))
    chd["numa_nodes"] = chd["numa_nodes"][:1]
    assert host_columns.model_of(chd) is None
    assert host_columns.kept_rows() == 0
    assert not host_columns._layouts


def _post(client: TestClient, hosts: list[dict[str, Any]]) -> Any:
    body = {"vm": VM, "dialect": "openstack-flavor", "configurations": False, "hosts": hosts}
    headers = {**auth("reader"), "Content-Type": "application/json", "Content-Encoding": "gzip"}
    data = gzip.compress(json.dumps(body).encode())
    return client.post("/v1/evaluations", content=data, headers=headers)


def _sent(chd: dict[str, Any]) -> dict[str, Any]:
    ref, _ = digest(chd)
    return {"id": chd["id"], "ref": ref, "chd": {k: v for k, v in chd.items() if k != "id"}}


def test_hosts_in_columns_are_answered_as_their_rows(sqlite_client: TestClient) -> None:
    views = [host(random.Random(100 + k), f"col-{k}") for k in range(6)]
    as_rows = _post(sqlite_client, [_sent(chd_of(v)) for v in views])
    as_columns = _post(sqlite_client, [_sent(chd_of(v, columns=True)) for v in views])
    assert as_rows.status_code == as_columns.status_code == 200, as_columns.text
    assert as_columns.json() == as_rows.json()
    assert any(a["fits"] for a in as_rows.json()["hosts"])
    again = _post(
        sqlite_client,
        [
            {"id": h["id"], "ref": h["ref"]}
            for h in map(_sent, (chd_of(v, columns=True) for v in views))
        ],
    )
    assert again.json() == as_rows.json()  # held by digest, read from what was kept


def _columns_host(change: Any) -> dict[str, Any]:
    chd = _wire(chd_of(host(random.Random(7), "bad"), columns=True))
    change(chd["numa_nodes"][0]["cpus"])
    return chd


def _set(key: str, value: Any) -> Any:
    return lambda cpus: cpus.__setitem__(key, value)


@pytest.mark.parametrize(
    ("change", "pointer", "words"),
    [
        (_set("id", 5), "/hosts/0/chd/numa_nodes/0/cpus/id", "must be a list"),
        (lambda c: c["core"].pop(), "/hosts/0/chd/numa_nodes/0/cpus/core", "values where the rows"),
        (_set("template", [99] * 3), "/hosts/0/chd/numa_nodes/0/cpus/template", "must index"),
        (
            lambda c: c["template"].__setitem__(0, True),
            "/hosts/0/chd/numa_nodes/0/cpus/template",
            "integers",
        ),
        (_set("templates", [5]), "/hosts/0/chd/numa_nodes/0/cpus/templates", "list of objects"),
        (
            lambda c: c.clear() or c.update(template=5),
            "/hosts/0/chd/numa_nodes/0/cpus/template",
            "integers",
        ),
        (_set("templates", []), "/hosts/0/chd/numa_nodes/0/cpus/template", "must index"),
        (
            lambda c: c["templates"][0].__setitem__("core", 1),
            "/hosts/0/chd/numa_nodes/0/cpus/templates/0",
            "columns too",
        ),
    ],
)
def test_columns_that_stand_for_no_rows_are_refused_naming_the_column(
    sqlite_client: TestClient, change: Any, pointer: str, words: str
) -> None:
    chd = _columns_host(change)
    answer = _post(sqlite_client, [_sent(chd)])
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert problem["code"] == "nfvplace.input.invalid"
    [finding] = problem["findings"]
    assert finding["rule"] == "NFV001"
    assert finding["pointer"] == pointer.replace("/chd", "")
    assert words in finding["message"]


def test_a_row_the_model_refuses_is_refused_as_in_rows(sqlite_client: TestClient) -> None:
    def busy(cpus: dict[str, Any]) -> None:
        cpus["templates"][0]["state"] = "busy"

    chd = _columns_host(busy)
    answer = _post(sqlite_client, [_sent(chd)])
    rows = _post(sqlite_client, [_sent(host_columns.rows(chd))])
    assert answer.status_code == rows.status_code == 422
    assert answer.json()["findings"] == rows.json()["findings"]
    findings = answer.json()["findings"]
    assert findings  # one per row of that template
    for finding in findings:
        assert finding["code"] == "nfvplace.input.invalid"
        assert ".cpus[" in finding["path"]
        assert finding["path"].endswith(".state")


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 300)
    | st.floats(allow_nan=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=9), inner, max_size=4)
    ),
    max_leaves=12,
)
COLUMN_NAMES = st.sampled_from(["id", "core", "siblings", "template", "templates", "state", "x"])


@settings(max_examples=300, deadline=None)
@given(
    columns=st.dictionaries(COLUMN_NAMES, JSON, max_size=5),
    vfs=st.dictionaries(COLUMN_NAMES, JSON, max_size=3),
)
def test_any_columns_give_the_model_or_a_refusal_never_a_crash(
    columns: dict[str, Any], vfs: dict[str, Any]
) -> None:
    from nfvplace.service.problems import ProblemError

    chd = _wire(chd_of(host(random.Random(11), "fuzz"), columns=True))
    chd["numa_nodes"][0]["cpus"] = columns
    chd["numa_nodes"][-1]["nics"] = [
        {
            "vendor": "v",
            "model": "m",
            "ports": [{"pci_address": "0000:00:00.0", "speed_gbps": 0, "vfs": vfs}],
        }
    ]
    model = host_columns.model_of({**chd, "id": "fuzz"})
    try:
        written = host_columns.rows_of(0, {**chd, "id": "fuzz"})
    except ProblemError as exc:  # columns that stand for no rows: a 422, and no model
        refused = (exc.status, model)
        assert refused == (422, None)
        return
    try:
        expected = ComputeHostDescriptor.model_validate(written)
    except ValueError:
        assert model is None
    else:
        assert model == expected


def _in_columns(rows: list[dict[str, Any]], columned: set[str]) -> dict[str, Any]:
    """`rows` as columns: the fields named in `columned` (those every row has) as columns, the
    others as templates."""
    names = sorted(name for name in columned if all(name in row for row in rows))
    templates: list[dict[str, Any]] = []
    which = []
    for row in rows:
        rest = {k: v for k, v in row.items() if k not in names}
        if rest not in templates:
            templates.append(rest)
        which.append(templates.index(rest))
    out: dict[str, Any] = {name: [row[name] for row in rows] for name in names}
    return {**out, "template": which, "templates": templates or [{}]}


def _as_columns(chd: dict[str, Any], cpu_columns: set[str], vf_columns: set[str]) -> dict[str, Any]:
    """A CHD (rows, as JSON reads it) with every node's PUs and every port's VFs as columns."""
    nodes = []
    for node in chd["numa_nodes"]:
        node = {**node, "cpus": _in_columns(node.get("cpus", []), cpu_columns)}
        node["nics"] = [
            {
                **nic,
                "ports": [
                    {**port, "vfs": _in_columns(port.get("vfs", []), vf_columns)}
                    for port in nic.get("ports", [])
                ],
            }
            for nic in node.get("nics", [])
        ]
        nodes.append(node)
    return {**chd, "numa_nodes": nodes}


def _tables(models: list[ComputeHostDescriptor]) -> dict[str, Any]:
    """Every kind's index columns of these hosts, as plain values."""
    index = FleetIndex(models, share=False)
    return {
        name: {k: v.tolist() if hasattr(v, "tolist") else v for k, v in vars(table).items()}
        for name, table in index.tables.items()
    }


CPU_FIELDS = st.sets(st.sampled_from(["id", "core", "siblings", "state", "eligible", "owner"]))
VF_FIELDS = st.sets(st.sampled_from(["pci_address", "in_use", "owner", "vlan"]))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), cpu_columns=CPU_FIELDS, vf_columns=VF_FIELDS)
def test_hostgen_hosts_in_any_columns_read_into_the_model_and_index_rows_of_their_rows(
    seed: int, cpu_columns: set[str], vf_columns: set[str]
) -> None:
    """Real-shaped hosts (bench/hostgen: NICs with VFs, shared pools, partial use), any of their
    fields as columns and the rest as templates: the model the columns give is the rows' model,
    and the fleet index built from it has the same rows, kind by kind; with the rows kept from
    before (a worker's second request) too."""
    fleet = make_fleet(3, seed=seed)
    rows = [_wire(h.model_dump(mode="json", by_alias=True, exclude_none=True)) for h in fleet]
    expected = [ComputeHostDescriptor.model_validate(chd) for chd in rows]
    for _ in range(2):
        models = [host_columns.model_of(_as_columns(chd, cpu_columns, vf_columns)) for chd in rows]
        assert models == expected
        assert _tables(models) == _tables(expected)  # type: ignore[arg-type]


# one client for every example, on purpose: the service keeps the rows a request read
@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    node=st.integers(0, 1),
    position=st.integers(0, 200),
    field=st.sampled_from(["id", "core", "siblings", "state", "eligible", "usage_ratio"]),
    value=JSON,
)
def test_a_bad_value_in_the_columns_is_refused_with_the_rows_codes_and_paths(
    sqlite_client: TestClient, seed: int, node: int, position: int, field: str, value: Any
) -> None:
    """One PU's field given a fuzzed value (a column's, or its template's: every PU of that
    template), in a host whose rows the service already keeps: answered as the same CHD in rows is
    (the same status, and when refused the same findings: codes and paths)."""
    chd = _wire(chd_of(host(random.Random(seed), f"bad-{seed}"), columns=True))
    assert _post(sqlite_client, [_sent(chd)]).status_code == 200  # its rows kept
    cpus = chd["numa_nodes"][node]["cpus"]
    position %= len(cpus["id"])
    if field in cpus:
        cpus[field][position] = value
    else:
        cpus["templates"][cpus["template"][position]][field] = value
    rows = host_columns.rows(chd)
    as_columns, as_rows = _post(sqlite_client, [_sent(chd)]), _post(sqlite_client, [_sent(rows)])
    assert as_columns.status_code == as_rows.status_code, as_columns.text
    if as_rows.status_code == 422:
        assert as_columns.json()["code"] == as_rows.json()["code"]
        assert as_columns.json()["findings"] == as_rows.json()["findings"]


def _rows_of(model: ComputeHostDescriptor) -> list[Any]:
    return [
        row
        for node in model.numa_nodes
        for row in (*node.cpus, *(vf for nic in node.nics for port in nic.ports for vf in port.vfs))
    ]


@settings(max_examples=30, deadline=None)
@given(seeds=st.lists(st.integers(0, 10_000), min_size=2, max_size=4), isolate=st.booleans())
def test_rows_joined_from_values_validated_before_are_the_rows_validated(
    seeds: list[int], isolate: bool
) -> None:
    """A row whose template and column values were validated before (in other layouts, other
    hosts) is joined from them: field by field, fields set and order of fields, it is the row
    validated (the models' fields are validated each on its own: `_fields_apart`)."""
    host_columns.forget()
    for seed in seeds:
        view = host(random.Random(seed), f"j-{seed}")
        closed = isolate_refused(view) if isolate else None
        model = host_columns.model_of(_wire(chd_of(view, closed, columns=True)))
        expected = ComputeHostDescriptor.model_validate(chd_of(view, closed))
        assert model == expected
        assert model is not None
        for row, want in zip(_rows_of(model), _rows_of(expected), strict=True):
            assert list(row.__dict__.items()) == list(want.__dict__.items())
            assert row.model_fields_set == want.model_fields_set
            assert row.model_dump_json(exclude_unset=True) == want.model_dump_json(
                exclude_unset=True
            )
            assert (row.__pydantic_extra__, row.__pydantic_private__) == (None, None)


def test_a_row_of_known_template_and_values_is_joined_not_validated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A host like one read before but for one more VF per pool (new layouts of VFs, each VF's
    address seen before but the last) and a core pinned more (its PUs' rows new to their layout,
    of a template and values seen before): those rows are joined, and only the new VFs are
    validated."""
    from nfvplace.models.chd import Cpu, VirtualFunction

    host_columns.forget()
    first = host(random.Random(21), "first")
    host_columns.model_of(_wire(chd_of(first, columns=True)))
    validated: list[type[Any]] = []
    real = Cpu.model_validate.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Any], *args: Any, **kwargs: Any) -> Any:
        validated.append(cls)
        return real(cls, *args, **kwargs)

    for model in (Cpu, VirtualFunction):
        monkeypatch.setattr(model, "model_validate", classmethod(counted))
    second = json.loads(json.dumps(first))
    for pool in second["pci_pools"]:
        pool["count"] += 1
    cell = second["cells"][0]
    cell["pinned_cpus"] = sorted({*cell["pinned_cpus"], *cell["siblings"][-1]})
    model = host_columns.model_of(_wire(chd_of(second, columns=True)))
    assert model == ComputeHostDescriptor.model_validate(chd_of(second))
    assert validated.count(VirtualFunction) == len(second["pci_pools"])  # the one new VF each
    assert validated.count(Cpu) == 0  # every PU's template and values were seen


def test_only_models_whose_fields_validate_apart_are_joined() -> None:
    from pydantic import model_validator

    from nfvplace.models.base import Model
    from nfvplace.models.chd import Cpu, VirtualFunction

    class Checked(Model):
        id: int
        core: int

        @model_validator(mode="after")
        def _core_of_id(self) -> Checked:
            return self

    assert host_columns._fields_apart(Cpu)
    assert host_columns._fields_apart(VirtualFunction)
    assert not host_columns._fields_apart(Checked)
