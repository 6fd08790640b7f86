"""The bundled examples work together: the example VMs place on the example fleet, checked by the
independent checker, and the one that cannot (the vBRAS) is explained."""

from __future__ import annotations

from pathlib import Path

import pytest

import nfvplace
from nfvplace.claims import claim
from nfvplace.lint import lint_document
from nfvplace.models import ComputeHostDescriptor, VmDescriptor, dump, parse_text

from .checker import violations

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _fleet() -> list[ComputeHostDescriptor]:
    hosts = nfvplace.load(EXAMPLES / "fleet")
    assert isinstance(hosts, list)
    return [h for h in hosts if isinstance(h, ComputeHostDescriptor)]


@pytest.mark.parametrize("name", ["cloud-vm", "nfv-per-001-figure8", "sriov-small", "vran-du"])
def test_example_vm_places_on_the_example_fleet(name: str) -> None:
    hosts = _fleet()
    vm = nfvplace.load(EXAMPLES / "vms" / f"{name}.yaml")
    assert isinstance(vm, VmDescriptor)
    result = nfvplace.place(hosts, vm)
    assert result.ok, result.diagnosis
    assert violations(hosts, vm, result.configurations) == []
    (config,) = result.configurations
    host = next(h for h in hosts if h.id == config.host)
    assert claim(host, config) == result.hosts[config.host]
    findings = lint_document(parse_text(dump(config), f"{name}.configuration.yaml"))
    assert findings == []  # what placement emits, `nfvplace lint` accepts


def test_ran_site_vnf_places_every_member() -> None:
    vnf = nfvplace.load(EXAMPLES / "vnf" / "ran-site.yaml")
    result = nfvplace.place(_fleet(), vnf)
    assert result.ok, result.diagnosis
    assert {c.vm for c in result.configurations} >= {"vran-du"}
    assert len(result.configurations) == sum(m.count for m in vnf.members)  # type: ignore[union-attr]


def test_vbras_is_explained_not_placed() -> None:
    vm = nfvplace.load(EXAMPLES / "vms" / "vbras.yaml")
    result = nfvplace.place(_fleet(), vm)
    assert not result.ok
    assert result.diagnosis is not None
    assert result.diagnosis.summary.startswith("0/10 hosts fit")
    assert {r.reason for r in result.diagnosis.rejections} == {"processor_model"}
