"""The bundled examples work together: the example VMs place on the example fleet, checked by the
independent checker, and every bundled example VM fits at least one bundled host."""

from __future__ import annotations

from pathlib import Path

import pytest

import nfvplace
from nfvplace.claims import claim
from nfvplace.lint import lint_document
from nfvplace.models import ComputeHostDescriptor, VmDescriptor, VnfTemplate, dump, parse_text

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


def _bundled_hosts() -> list[ComputeHostDescriptor]:
    hosts = [nfvplace.load(EXAMPLES / "fleet"), nfvplace.load(EXAMPLES / "hosts")]
    return [
        h
        for group in hosts
        if isinstance(group, list)
        for h in group
        if isinstance(h, ComputeHostDescriptor)
    ]


BUNDLED_VMS = sorted(
    [
        *(EXAMPLES / "vms").glob("*.yaml"),
        *(EXAMPLES / "vnf").glob("**/*.yaml"),
        *(EXAMPLES / "dialects").glob("*.yaml"),  # a vendor's VM in its own format
    ],
    key=lambda p: p.name,
)


@pytest.mark.parametrize("path", BUNDLED_VMS, ids=lambda p: p.name)
def test_every_bundled_example_vm_fits_a_bundled_host(path: Path) -> None:
    vm = nfvplace.load(path)
    assert isinstance(vm, VmDescriptor | VnfTemplate)
    result = nfvplace.place(_bundled_hosts(), vm)
    assert result.ok, result.diagnosis.summary if result.diagnosis else path


def test_the_bundled_pod_fits_the_bundled_kubernetes_node() -> None:
    node = nfvplace.load(EXAMPLES / "kubernetes" / "nrt-worker-1.yaml")
    pod = nfvplace.load(EXAMPLES / "kubernetes" / "cnf-pod.yaml")
    assert isinstance(pod, VmDescriptor)
    assert isinstance(node, ComputeHostDescriptor)
    result = nfvplace.place([node], pod)
    assert result.ok, result.diagnosis.summary if result.diagnosis else pod


def test_vbras_fits_the_fleet_through_its_sriov_variant() -> None:
    vm = nfvplace.load(EXAMPLES / "vms" / "vbras.yaml")
    assert isinstance(vm, VmDescriptor)
    result = nfvplace.place(_fleet(), vm)
    assert result.ok, result.diagnosis
    config = result.configuration
    assert config.variant == "gold-6230-sriov"
    assert [i.mode.value for i in config.interfaces if i.cpu_set == 0] == ["sriov"] * 4
