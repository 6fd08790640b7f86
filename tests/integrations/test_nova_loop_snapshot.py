"""The Nova loop's snapshot check (bench/nova_loop.inconsistencies) on plain snapshots: pinned CPUs
per cell against the servers' pins, and the instances nova-compute's resource tracker counts
against the live servers (a claim it kept after the claim raised shows there first)."""

from __future__ import annotations

from typing import Any

import pytest

from bench import nova_loop


def _server(uuid: str, pins: list[int]) -> dict[str, Any]:
    cell = {
        "id": 0,
        "pcpuset": list(range(len(pins))),
        "memory": 512,
        "pagesize": None,
        "cpu_pinning": {str(k): p for k, p in enumerate(pins)},
        "cpuset_reserved": [],
    }
    return {
        "id": uuid,
        "host": "flat-0",
        "vcpus": len(pins),
        "memory_mb": 512,
        "allocations": {"PCPU": len(pins), "MEMORY_MB": 512},
        "numa_topology": {"cells": [cell]},
    }


def _snapshot(pinned: list[int], tracked: list[str], servers: list[dict[str, Any]]) -> Any:
    host = {
        "cells": [{"id": 0, "pinned_cpus": pinned, "mempages": []}],
        "usages": {"PCPU": sum(s["allocations"]["PCPU"] for s in servers)},
        "nova": {"tracker_pinned": {"0": pinned}, "tracked": tracked},
    }
    return {"snapshot": "x", "hosts": {"flat-0": host}, "servers": {s["id"]: s for s in servers}}


@pytest.mark.parametrize(
    ("pinned", "tracked", "servers", "problems"),
    [
        ([2, 5], ["a"], [_server("a", [2, 5])], []),
        ([], [], [], []),
        # a claim kept by the tracker after it raised: pins and tracked instance left behind
        (
            [1, 2, 4, 5],
            ["a", "b"],
            [_server("a", [2, 5])],
            [
                "flat-0: the resource tracker counts instances ['b'], not live there",
                "flat-0 cell 0: pinned [1, 2, 4, 5], the servers pin [2, 5]",
            ],
        ),
        # the same before its pins were saved: only the tracker shows it
        (
            [2, 5],
            ["a", "b"],
            [_server("a", [2, 5])],
            ["flat-0: the resource tracker counts instances ['b'], not live there"],
        ),
    ],
)
def test_a_snapshot_names_what_nova_holds_that_no_live_server_does(
    pinned: list[int], tracked: list[str], servers: list[dict[str, Any]], problems: list[str]
) -> None:
    assert nova_loop.inconsistencies(_snapshot(pinned, tracked, servers)) == problems
