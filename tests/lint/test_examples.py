"""Every file under examples/ lints without errors or warnings and loads as a typed descriptor."""

from __future__ import annotations

from pathlib import Path

import pytest

import nfvplace
from nfvplace.lint import Severity, lint_file
from nfvplace.models.loading import iter_descriptor_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FILES = sorted(iter_descriptor_files(EXAMPLES))


def test_there_are_examples_of_every_kind() -> None:
    kinds = {lint_file(path).kind for path in FILES}
    assert {"nfvplace/vmd/v1", "nfvplace/vnf/v1", "nfvplace/vm-configuration/v1"} <= kinds


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_lints_clean(path: Path) -> None:
    result = lint_file(path)
    noisy = [f for f in result.findings if f.severity is not Severity.info]
    assert not noisy, "\n".join(f"{f.rule} {f.path}: {f.message}" for f in noisy)
    assert not result.unreadable


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_loads(path: Path) -> None:
    loaded = nfvplace.load(path)
    assert isinstance(
        loaded,
        nfvplace.ComputeHostDescriptor
        | nfvplace.VmDescriptor
        | nfvplace.VnfTemplate
        | nfvplace.VmConfiguration,
    )


def test_dialect_examples_are_read_as_their_dialect() -> None:
    dialects = {
        path.name: lint_file(path).dialect for path in FILES if path.parent.name == "dialects"
    }
    assert dialects == {
        "openstack-flavor-du.yaml": "openstack-flavor",
        "osm-vnfd-guest-epa.yaml": "osm-sol006",
        "openvim-vbras.yaml": "openvim",
        "sol001-vnfd.yaml": "sol001-tosca",
    }


def test_vran_du_is_realtime_on_whole_cores() -> None:
    du = nfvplace.load(EXAMPLES / "vms" / "vran-du.yaml")
    assert isinstance(du, nfvplace.VmDescriptor)
    (cpu_set,) = du.cpu_sets
    assert set(du.realtime_vcpus) == set(cpu_set.single_vcpus)  # RT vCPUs are unpaired: whole cores
    assert cpu_set.paired_vcpus == {0, 1}  # the housekeeping pair
    assert cpu_set.hugepages is not None
    assert cpu_set.hugepages.size_kib == 1024 * 1024
    assert {i.mode.value for i in cpu_set.interfaces} == {"sriov"}
    # emulator threads share the VM's PUs; renderers pin them to the non-realtime (housekeeping) vCPUs
    assert du.emulator_threads.value == "share"


def test_vbras_has_four_10g_ports_and_a_variant() -> None:
    vbras = nfvplace.load(EXAMPLES / "vms" / "vbras.yaml")
    assert isinstance(vbras, nfvplace.VmDescriptor)
    ports = [i for i in vbras.cpu_sets[0].interfaces if i.mode.value == "dedicated"]
    assert [p.speed_gbps for p in ports] == [10, 10, 10, 10]
    assert vbras.total_vcpus == 16
    assert vbras.with_variant(vbras.variants[0]).total_vcpus == 12
