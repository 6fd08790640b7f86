"""A port's entry kept with the port's object (`ports._port`) is the entry worked out from the port
(`_port_made`): on fuzzed hosts and the realistic mix, with one object shared between hosts and
nodes (`Interner`), for ports made again at an address another object had, and it goes with its
port."""

from __future__ import annotations

import gc
from collections import OrderedDict

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_differential import chds

from bench.hostgen import make_fleet
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.placement.index import free_of
from nfvplace.placement.index.hosts import Interner
from nfvplace.placement.resources.nics import ports

from ..index.test_claimed_deltas import SETTINGS


def _made(host: ComputeHostDescriptor) -> list[ports.NodePorts]:
    """Each node's ports as worked out from the ports themselves, nothing kept."""
    out = []
    for node in host.numa_nodes:
        entries, budgets = [], {}
        for k, nic in enumerate(node.nics):
            key = f"n{node.id}nic{k}"
            budget = ports._nic_budget(nic)
            if budget is not None:
                budgets[key] = budget
            entries.extend(ports._port_made(node, port, key) for port in nic.ports)
        out.append(ports.NodePorts(tuple(entries), budgets))
    return out


def _check(hosts: list[ComputeHostDescriptor]) -> None:
    for host in hosts:
        for _ in range(2):  # the second read finds every entry kept
            nics = free_of(host).parts["nics"]
            assert isinstance(nics, ports.NicsFree)
            assert list(nics.nodes) == _made(host)


@SETTINGS
@given(st.lists(chds("h"), min_size=1, max_size=6))
def test_kept_entries_are_the_ports_own_on_fuzzed_hosts(hosts: list[ComputeHostDescriptor]) -> None:
    shared = Interner()
    _check([shared.host(h.model_copy(update={"id": f"h{k}"})) for k, h in enumerate(hosts)])
    _check(hosts)


def test_kept_entries_are_the_ports_own_on_the_mix() -> None:
    shared = Interner()
    _check([shared.host(h) for h in make_fleet(60, seed=5)])


def test_an_entry_goes_with_its_port() -> None:
    hosts = [Interner().host(h) for h in make_fleet(20, seed=6)]
    _check(hosts)
    held = {id(p) for h in hosts for n in h.numa_nodes for nic in n.nics for p in nic.ports}
    assert held & set(ports._kept)
    del hosts
    gc.collect()
    assert not held & set(ports._kept)
    _check(make_fleet(20, seed=6))  # new objects, some at the addresses the old ones had


def test_the_kept_ports_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ports, "KEEP_PORTS", 5)
    # an empty table: ports other tests keep alive (frozen fleets) stay in the module's own table,
    # which the bound trims one entry per new one and so never below what it holds
    monkeypatch.setattr(ports, "_kept", OrderedDict())
    _check([Interner().host(h) for h in make_fleet(40, seed=7)])
    assert len(ports._kept) <= 5
