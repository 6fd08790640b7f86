"""The agent's view of libvirt's domains and its drift against the inventory (real placements,
rendered by nfvplace's libvirt renderer, read back as libvirt would dump them)."""

from __future__ import annotations

from pathlib import Path

import pytest

import nfvplace
from nfvplace.agent.domains import Domain, DomainsUnreadableError, from_folder, parse_domain
from nfvplace.agent.drift import drift, summary, with_domains
from nfvplace.claims import claim
from nfvplace.models import ComputeHostDescriptor, VmConfiguration, VmDescriptor
from nfvplace.render import render

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "libvirt"


def test_domain_xml_fixtures_are_read() -> None:
    dataplane, nova = from_folder(FIXTURES)
    assert dataplane.name == "dataplane-vm-1"
    assert dataplane.pus == {2, 3, 4, 21, 22, 23, 24, 42, 43, 44, 61, 62, 63, 64}  # not the range
    assert dataplane.pci == {"0000:af:00.0", "0000:af:02.1"}
    assert (nova.name, nova.pus, nova.pci) == ("instance-0000002a", {5, 45}, {"0000:18:02.3"})


@pytest.mark.parametrize("text", ["<domain><nam>x</nam></domain>", "<domain", "<vm/>"])
def test_a_broken_domain_xml_is_an_error_naming_it(text: str) -> None:
    with pytest.raises(DomainsUnreadableError, match=r"dump\.xml"):
        parse_domain(text, "dump.xml")


def test_entities_are_never_expanded() -> None:
    text = (
        "<!DOCTYPE d [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><domain><name>vm&e;</name></domain>"
    )
    try:
        name = parse_domain(text, "dump.xml").name
    except DomainsUnreadableError:
        return
    assert "root:" not in name


def running(host: ComputeHostDescriptor) -> list[Domain]:
    """A domain for every owner the host already shows (the VMs running there before)."""
    owners: dict[str, set[int]] = {}
    for cpu in host.cpus:
        if cpu.owner:
            owners.setdefault(cpu.owner, set()).add(cpu.id)
    pci = {
        a.pci_address.lower(): a.owner
        for node in host.numa_nodes
        for port in node.ports
        for a in (port, *port.vfs)
        if a.owner
    }
    return [
        Domain(o, frozenset(owners.get(o, ())), frozenset(k for k, v in pci.items() if v == o))
        for o in sorted(set(owners) | {v for v in pci.values() if v})
    ]


@pytest.fixture
def placed() -> tuple[ComputeHostDescriptor, VmConfiguration, Domain]:
    """compute-07 and a VM placed on it, with the domain libvirt runs for it."""
    host = nfvplace.load(ROOT / "examples" / "fleet" / "compute-07.yaml")
    vm = nfvplace.load(ROOT / "examples" / "vms" / "sriov-small.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    assert isinstance(vm, VmDescriptor)
    result = nfvplace.place([host], vm)
    assert result.configuration is not None
    domain = parse_domain(render(result.configuration, "libvirt", vm=vm).text, "rendered")
    return host, result.configuration, domain


def test_no_drift_when_the_inventory_holds_what_runs(placed: tuple) -> None:  # type: ignore[type-arg]
    host, config, domain = placed
    others = running(host)
    inventory = claim(host, config)
    truth = with_domains(host, [*others, domain])
    assert [
        d for d in drift(truth, inventory, [*others, domain]) if d.resource != "hugepages"
    ] == []


def test_a_running_vm_the_inventory_does_not_hold_is_host_only(placed: tuple) -> None:  # type: ignore[type-arg]
    host, config, domain = placed
    domains = [*running(host), domain]
    found = drift(with_domains(host, domains), host, domains)
    pus = [d for d in found if d.resource == "pu"]
    assert {d.side for d in pus} == {"host_only"}
    assert len(pus) == len(config.pinned_cpus)
    assert f"'{domain.name}'" in pus[0].message
    assert {d.resource for d in found if d.side == "host_only"} >= {"pu"}


def test_a_claim_with_no_running_vm_is_inventory_only(placed: tuple) -> None:  # type: ignore[type-arg]
    host, config, _ = placed
    found = drift(host, claim(host, config), running(host))
    assert summary(found)["pu/inventory_only"] == len(config.pinned_cpus)
    assert all(config.owner in d.message for d in found if d.resource == "pu")


def test_another_owner_is_a_mismatch(placed: tuple) -> None:  # type: ignore[type-arg]
    host, config, domain = placed
    domains = [*running(host), Domain("someone-else", domain.pus, domain.pci)]
    found = drift(with_domains(host, domains), claim(host, config), domains)
    assert {d.side for d in found if d.resource == "pu"} == {"owner_mismatch"}


def test_without_libvirt_only_hugepages_are_compared(placed: tuple) -> None:  # type: ignore[type-arg]
    host, config, _ = placed
    found = drift(host, claim(host, config), None)
    assert {d.resource for d in found} == {"hugepages"}
    assert all(d.side == "inventory_only" for d in found)
    assert sum(d.count for d in found) == sum(
        cs.hugepages.count for cs in config.cpu_sets if cs.hugepages is not None
    )
