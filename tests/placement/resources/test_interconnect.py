"""The interconnect kind: cpu-set to cpu-set bandwidth over the NUMA interconnect, and distance."""

from __future__ import annotations

import pytest
from builders import cpu_set, host, vm
from constraint_cases import Case, check

INTERCONNECT = [
    Case(
        "interconnect bandwidth too small",
        [host(interconnect=({"nodes": [0, 1], "bandwidth_gbps": 1},))],
        vm(
            cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)],
            cpu_set_bandwidth=[{"cpu_sets": [0, 1], "bandwidth_mbps": 2000}],
        ),
        "infeasible",
        summary="fail the exact check on bandwidth of the NUMA interconnect",
    ),
    Case(
        "interconnect bandwidth enough",
        [host(interconnect=({"nodes": [0, 1], "bandwidth_gbps": 10},))],
        vm(
            cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)],
            cpu_set_bandwidth=[{"cpu_sets": [0, 1], "bandwidth_mbps": 2000}],
        ),
    ),
]

CASES = INTERCONNECT


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_interconnect_cases(case: Case) -> None:
    check(case)
