"""OpenStack flavor extra specs -> VM Descriptor."""

from __future__ import annotations

from pathlib import Path

import pytest

from nfvplace.dialects import DialectError, convert, detect, load_any
from nfvplace.lint import lint_text
from nfvplace.models import VmDescriptor
from nfvplace.models.loading import parse_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dialects"


def test_example_du_flavor() -> None:
    vm = load_any(EXAMPLES / "openstack-flavor-du.yaml")
    assert isinstance(vm, VmDescriptor)
    assert vm.name == "vran.du.large"
    (cpu_set,) = vm.cpu_sets
    assert cpu_set.vcpus == tuple(range(10))
    assert cpu_set.hugepages is not None
    assert (cpu_set.hugepages.size_kib, cpu_set.hugepages.count) == (1024 * 1024, 24)
    assert vm.realtime_vcpus == tuple(range(2, 10))
    assert vm.emulator_threads.value == "isolate"
    assert vm.storage[0].size_gib == 40


def test_two_numa_nodes_with_explicit_cpus_and_memory() -> None:
    conversion = convert(
        {
            "name": "dp",
            "vcpus": 6,
            "ram": 6144,
            "extra_specs": {
                "hw:cpu_policy": "dedicated",
                "hw:cpu_thread_policy": "require",
                "hw:numa_nodes": "2",
                "hw:numa_cpus.0": "0-3",
                "hw:numa_cpus.1": "4,5",
                "hw:numa_mem.0": "4096",
                "hw:numa_mem.1": "2048",
                "hw:mem_page_size": "2048",
            },
        }
    )
    vm = VmDescriptor.model_validate(conversion.data)
    assert [cs.vcpus for cs in vm.cpu_sets] == [(0, 1, 2, 3), (4, 5)]
    assert [cs.memory_mib for cs in vm.cpu_sets] == [4096, 2048]
    assert vm.cpu_sets[0].howtogroup == ((0, 1), (2, 3))
    assert vm.cpu_sets[1].hugepages is not None
    assert vm.cpu_sets[1].hugepages.count == 1024
    assert vm.cpu_thread_policy.value == "require"
    assert conversion.origins[("cpu_sets", 1, "vcpus")] == ("extra_specs", "hw:numa_cpus.1")


def test_shared_flavor_is_a_plain_cloud_vm() -> None:
    vm = VmDescriptor.model_validate(
        convert(
            {"flavor": {"name": "m1.small", "vcpus": 1, "ram": 2048, "disk": 20, "extra_specs": {}}}
        ).data
    )
    assert (vm.vcpus, vm.memory_mib, vm.cpu_oversubscription, vm.cpu_sets) == (1, 2048, True, ())


def test_openstack_cli_properties_string() -> None:
    data = {
        "name": "x",
        "vcpus": 2,
        "ram": 2048,
        "properties": "hw:cpu_policy='dedicated', hw:mem_page_size='large'",
    }
    assert detect(data) == "openstack-flavor"
    conversion = convert(data)
    vm = VmDescriptor.model_validate(conversion.data)
    assert vm.cpu_sets[0].hugepages is not None
    assert vm.cpu_sets[0].hugepages.size_kib == 1024 * 1024
    assert any("large" in note.message for note in conversion.notes)


def test_numa_cpus_mismatch_is_reported_against_the_flavor_line() -> None:
    text = (
        "flavor:\n  name: f\n  vcpus: 4\n  ram: 4096\n  extra_specs:\n"
        "    hw:cpu_policy: dedicated\n    hw:numa_nodes: 2\n"
        "    hw:numa_cpus.0: '0-1'\n    hw:numa_cpus.1: '1-3'\n"
    )
    result = lint_text(text, "f.yaml")
    assert result.dialect == "openstack-flavor"
    (dup,) = [f for f in result.findings if f.rule == "NFV101"]
    assert dup.path == "flavor.extra_specs.hw:numa_cpus.1"
    assert dup.line == 9
    assert "cpu_sets[1].vcpus[0]" in dup.message


def test_unknown_extra_spec_is_a_warning() -> None:
    text = "name: f\nvcpus: 1\nram: 512\nextra_specs:\n  hw:video_ram: '64'\n"
    result = lint_text(text, "f.yaml")
    (note,) = [f for f in result.findings if f.rule == "NFV005"]
    assert note.path == "extra_specs.hw:video_ram"
    assert note.line == 5


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ({"hw:cpu_policy": "dedicated", "hw:numa_nodes": "0"}, "hw:numa_nodes must be between"),
        ({"hw:cpu_policy": "dedicated", "hw:numa_cpus.0": "3-1"}, "is not a CPU or range"),
        ({"hw:cpu_policy": "dedicated", "hw:mem_page_size": "huge"}, "page size"),
    ],
)
def test_bad_specs_raise_dialect_errors(specs: dict[str, str], message: str) -> None:
    with pytest.raises(DialectError, match=message):
        convert({"name": "f", "vcpus": 2, "ram": 1024, "extra_specs": specs})


def test_parse_of_our_format_is_not_a_dialect() -> None:
    assert (
        detect(parse_text("schema: nfvplace/vmd/v1\nname: x\nvcpus: 1\nmemory_mib: 1\n").data)
        is None
    )
