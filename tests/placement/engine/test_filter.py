"""The filter stage (`engine/filter.py`) on its own: host checks in their order, node needs per
part, and what it records for the hosts it drops."""

from __future__ import annotations

import numpy as np
from builders import NodeSpec, cpu_set, host, vm

from nfvplace.placement import FleetIndex, Reason
from nfvplace.placement.engine.filter import HostCheckRecord, NodeRecord, run_filter
from nfvplace.placement.options import parse_options
from nfvplace.placement.request import build_request


def _filter(hosts: list, descriptor):  # type: ignore[no-untyped-def]
    fleet = FleetIndex(hosts)
    everyone = np.ones(len(fleet), dtype=np.bool_)
    return run_filter(fleet, build_request(descriptor), parse_options(), everyone)


def test_a_host_failing_a_host_check_is_dropped_with_that_check() -> None:
    outcome = _filter([host("ok"), host("bare", hypervisor=False)], vm())
    assert outcome.passing.tolist() == [True, False]
    (record,) = outcome.records
    assert isinstance(record, HostCheckRecord)
    assert record.check.code is Reason.hypervisor
    assert record.hosts.tolist() == [1]


def test_node_needs_say_which_nodes_each_cpu_set_may_use() -> None:
    small_then_big = host(nodes=[NodeSpec(cores=1), NodeSpec(cores=4)])
    outcome = _filter([small_then_big], vm(cpu_sets=[cpu_set(0, 4)]))
    assert outcome.passing.tolist() == [True]
    assert outcome.node_ok[0][0].tolist() == [False, True]


def test_a_host_with_no_node_for_a_cpu_set_is_recorded_per_part() -> None:
    outcome = _filter([host(nodes=[NodeSpec(cores=1), NodeSpec(cores=1)])], vm())
    assert not outcome.passing.any()
    (record,) = outcome.records
    assert isinstance(record, NodeRecord)
    assert record.cpu_set == 0
    assert record.hosts.tolist() == [0]


def test_hosts_not_considered_stay_out_and_are_not_recorded() -> None:
    fleet = FleetIndex([host("a"), host("b", hypervisor=False)])
    consider = np.array([True, False])
    outcome = run_filter(fleet, build_request(vm()), parse_options(), consider)
    assert outcome.passing.tolist() == [True, False]
    assert outcome.records == []
