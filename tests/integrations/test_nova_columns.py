"""A CHD's PUs and VFs as columns (`nfvplace.integrations.nova.columns`), as the Nova filter sends
its hosts: the columns stand for exactly the rows of the CHD `chd_of` writes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bench.nova_candidates import host
from nfvplace.integrations.nova.columns import expanded, rows
from nfvplace.integrations.nova.hosts import _cpu_info, chd_of, isolate_refused
from nfvplace.integrations.nova.reach import host_wide
from tests.integrations.test_nova_hosts import SMT_CELL, VIEW

FLAT = {"host": "flat", "vcpus_total": 4, "memory_mb": 8192, "cells": [], "pci_pools": []}
LEGACY = {
    "host": "legacy",
    "cells": [{**SMT_CELL, "cpuset": [0, 1, 2, 4], "pcpuset": [0, 1, 2, 4]}],
}
VIEWS = {
    "every state, SR-IOV and devices": {**VIEW, "cpu_info": _cpu_info(VIEW["cpu_info"])},
    "no NUMA topology": FLAT,
    "legacy vcpu_pin_set": {**LEGACY, "pci_pools": []},
    "bench host": host(random.Random(3), "bench-3"),
    "bench host, host-wide": host_wide(host(random.Random(4), "bench-4")),
}


def _closed(view: dict[str, Any]) -> dict[int, list[int]]:
    return isolate_refused(view) if view["cells"] else {}


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
@pytest.mark.parametrize("isolate", [False, True])
def test_the_columns_stand_for_the_rows_of_the_chd(view: dict[str, Any], isolate: bool) -> None:
    closed = _closed(view) if isolate else None
    columns = chd_of(view, closed, columns=True)
    assert all(isinstance(node["cpus"], dict) for node in columns["numa_nodes"])
    assert rows(columns) == chd_of(view, closed)


def test_a_row_is_its_template_with_each_columns_value() -> None:
    columns = {
        "id": [4, 5, 36],
        "core": [4, 5, 4],
        "siblings": [[4, 36], [5, 37], [4, 36]],
        "template": [0, 1, 0],
        "templates": [{"state": "dedicated", "owner": "nova"}, {}],
    }
    assert expanded(columns) == [
        {"id": 4, "core": 4, "siblings": [4, 36], "state": "dedicated", "owner": "nova"},
        {"id": 5, "core": 5, "siblings": [5, 37]},
        {"id": 36, "core": 4, "siblings": [4, 36], "state": "dedicated", "owner": "nova"},
    ]
    assert expanded({"pci_address": ["0000:00:00.1", "0000:00:00.2"]}) == [
        {"pci_address": "0000:00:00.1"},
        {"pci_address": "0000:00:00.2"},
    ]
    assert expanded({}) == []


def test_the_columns_are_a_third_of_the_rows_on_the_wire() -> None:
    import json

    view = host(random.Random(5), "bench-5")
    size = len(json.dumps(chd_of(view, columns=True)))
    assert size < len(json.dumps(chd_of(view))) / 2
