"""The kinds' parts after a claim built directly (`memory_free._with`, `ports._vf_taken` and
`vfs_claimed`) instead of with `dataclasses.replace`: over the realistic mix's claims, each part
equals, field by field, the one `dataclasses.replace` gives; and every field of the dataclasses
built so is one the direct build names (a field added later is built or fails loudly)."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.placement.index import free_of
from nfvplace.placement.resources import memory_free
from nfvplace.placement.resources.base import HostFree
from nfvplace.placement.resources.memory import MEMORY
from nfvplace.placement.resources.memory_free import MemoryNode, _with
from nfvplace.placement.resources.nics import NICS
from nfvplace.placement.resources.nics import ports as ports_module
from nfvplace.placement.resources.nics.ports import FreePort, NicsFree, NodePorts


def _claims() -> list[tuple[ComputeHostDescriptor, HostFree, VmConfiguration]]:
    """Each configuration of the mix placed on 30 hosts, with the free resources it was placed on."""
    fleet = nfvplace.Fleet(make_fleet(30, seed=7))
    out = []
    for vm in request_stream(90, seed=8):
        result = fleet.try_place(vm)
        if result.ok:
            host = fleet.host(result.configuration.host)
            out.append((host, free_of(host), result.configuration))
            fleet.place(vm)
    return out


CLAIMS = _claims()


def _replace_with(monkeypatch: pytest.MonkeyPatch) -> None:
    """The modules as they were: every part built with `dataclasses.replace`."""

    def with_(
        part: MemoryNode, *, pages: object = None, normal: object = None, over: object = None
    ) -> MemoryNode:
        changes = {"hugepages_free": pages, "normal_free_mib": normal, "normal_free_over_mib": over}
        kept = {k: v for k, v in changes.items() if v is not None}
        return dataclasses.replace(part, **kept)  # type: ignore[arg-type]

    def vf_taken(node: NodePorts, k: int, port: FreePort, vf: int, gbps: float) -> NodePorts:
        direct = real_vf_taken(node, k, port, vf, gbps)
        replaced = dataclasses.replace(
            port,
            free_vfs=direct.ports[k].free_vfs,
            vf_rates_kbps=direct.ports[k].vf_rates_kbps,
            bandwidth_used_gbps=direct.ports[k].bandwidth_used_gbps,
            bandwidth_free_kbps=direct.ports[k].bandwidth_free_kbps,
            dedicable=False,
        )
        return NodePorts((*node.ports[:k], replaced, *node.ports[k + 1 :]), direct.nic_free_kbps)

    real_vf_taken = ports_module._vf_taken
    monkeypatch.setattr(memory_free, "_with", with_)
    monkeypatch.setattr(ports_module, "_vf_taken", vf_taken)


def test_each_part_equals_the_one_replace_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    assert sum(1 for _, _, config in CLAIMS if config.interfaces) >= 5
    got = [
        (
            memory_free.memory_claimed(host, free.of(MEMORY), config),
            ports_module.vfs_claimed(free.of(NICS), config),
        )
        for host, free, config in CLAIMS
    ]
    _replace_with(monkeypatch)
    want = [
        (
            memory_free.memory_claimed(host, free.of(MEMORY), config),
            ports_module.vfs_claimed(free.of(NICS), config),
        )
        for host, free, config in CLAIMS
    ]
    assert got == want
    assert sum(1 for memory, _ in got if memory is not None) >= 20


def test_the_direct_builds_name_every_field() -> None:
    source = inspect.getsource(ports_module._vf_taken) + inspect.getsource(ports_module.vfs_claimed)
    for field in dataclasses.fields(FreePort):
        assert f"port.{field.name}" in source or f"{field.name}=" in source, field.name
    for field in dataclasses.fields(NicsFree):
        assert f"free.{field.name}" in source or field.name == "nodes", field.name
    source = inspect.getsource(_with)
    for field in dataclasses.fields(MemoryNode):
        assert f"part.{field.name}" in source, field.name
