"""Numbers and strings beyond what the models hold are a 422 naming the field by JSON pointer, on
SQLite and PostgreSQL; nothing is stored and every later read still works."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from service_hosts import host, vm

Edit = Callable[[dict[str, Any]], None]


def _set(*path: str | int, value: Any) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        target: Any = doc
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return edit


HOST_CASES: list[tuple[str, Edit, str]] = [
    (
        "memory 2^63",
        _set("numa_nodes", 0, "memory", "total_mib", value=2**63),
        "/numa_nodes/0/memory/total_mib",
    ),
    ("NUMA id 2^63", _set("numa_nodes", 0, "id", value=2**63), "/numa_nodes/0/id"),
    ("PU id 2^40", _set("numa_nodes", 0, "cpus", 0, "id", value=2**40), "/numa_nodes/0/cpus/0/id"),
    (
        "negative count",
        _set("numa_nodes", 0, "memory", "hugepages", 0, "total", value=-1),
        "/numa_nodes/0/memory/hugepages/0/total",
    ),
    ("NUL in a name", _set("processor", "model", value="Xeon\x00"), "/processor/model"),
    ("lone surrogate", _set("processor", "vendor", value="\ud800"), "/processor/vendor"),
    ("huge string", _set("processor", "model", value="x" * 20_000), "/processor/model"),
    (
        "infinite ratio",
        _set("numa_nodes", 0, "cpus", 1, "oversubscription_ratio", value=1e309),
        "/numa_nodes/0/cpus/1/oversubscription_ratio",
    ),
]
VM_CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "30 million vCPUs",
        {"schema": "nfvplace/vmd/v1", "name": "big", "vcpus": 30_000_000, "memory_mib": 1024},
        "/vm/vcpus",
    ),
    (
        "vCPU id 2^40",
        {**vm("v"), "cpu_sets": [{**vm("v")["cpu_sets"][0], "vcpus": [0, 2**40]}]},
        "/vm/cpu_sets/0/vcpus/1",
    ),
    ("NUL in the name", {**vm("v"), "name": "v\x00"}, "/vm/name"),
    (
        "memory 2^63",
        {**vm("v"), "cpu_sets": [{**vm("v")["cpu_sets"][0], "memory_mib": 2**63}]},
        "/vm/cpu_sets/0/memory_mib",
    ),
]


def _pointers(answer: Any) -> list[str]:
    return [f.get("pointer", "") for f in answer.json().get("findings", [])]


def _body(doc: Any) -> bytes:
    # json.dumps writes 1e309 as Infinity, which is what a careless agent would send
    return json.dumps(doc).encode()


@pytest.mark.parametrize(("label", "edit", "pointer"), HOST_CASES, ids=[c[0] for c in HOST_CASES])
def test_a_host_beyond_the_bounds_is_refused_and_nothing_is_stored(
    client: TestClient, label: str, edit: Edit, pointer: str
) -> None:
    assert client.put("/v1/hosts/keep", json=host("keep")).status_code == 201
    bad = copy.deepcopy(host("bad"))
    edit(bad)
    answer = client.put(
        "/v1/hosts/bad", content=_body(bad), headers={"content-type": "application/json"}
    )
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"].startswith("nfvplace.input.")
    if answer.json()["code"] == "nfvplace.input.invalid":
        assert pointer in _pointers(answer), answer.text
    listed = client.get("/v1/hosts")
    assert listed.status_code == 200
    assert [h["id"] for h in listed.json()["hosts"]] == ["keep"]
    assert client.get("/v1/hosts/bad").status_code == 404


@pytest.mark.parametrize(("label", "bad", "pointer"), VM_CASES, ids=[c[0] for c in VM_CASES])
def test_a_vm_beyond_the_bounds_is_refused_and_nothing_is_placed(
    client: TestClient, label: str, bad: dict[str, Any], pointer: str
) -> None:
    assert client.put("/v1/hosts/h1", json=host("h1")).status_code == 201
    answer = client.post("/v1/placements", json={"vm": bad})
    assert answer.status_code == 422, answer.text
    assert pointer in _pointers(answer), answer.text
    assert client.get("/v1/placements").json()["placements"] == []
    assert client.post("/v1/placements", json={"vm": vm("ok")}).status_code == 201


def test_integers_over_4300_digits_are_a_syntax_error(client: TestClient) -> None:
    text = json.dumps(host("big")).replace('"id": 0', '"id": ' + "9" * 4301, 1)
    answer = client.put("/v1/hosts/big", content=text, headers={"content-type": "application/json"})
    assert answer.status_code == 422
    assert answer.json()["code"] == "nfvplace.input.syntax"
    assert "more than 4,300 digits" in answer.text
    assert "set_int_max_str_digits" not in answer.text  # Python's advice is not the reader's
    yaml_text = "schema: nfvplace/chd/v1\nid: " + "9" * 4301 + "\n"
    answer = client.put(
        "/v1/hosts/big", content=yaml_text, headers={"content-type": "application/yaml"}
    )
    assert answer.status_code == 422
    assert client.get("/v1/hosts").json()["hosts"] == []
