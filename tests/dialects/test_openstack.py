"""OpenStack flavor extra specs -> VM Descriptor."""

from __future__ import annotations

from pathlib import Path

import pytest

import nfvplace
from nfvplace.dialects import DialectError, convert, detect
from nfvplace.lint import lint_text
from nfvplace.models import VmDescriptor
from nfvplace.models.loading import parse_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dialects"


def test_example_du_flavor() -> None:
    vm = nfvplace.load(EXAMPLES / "openstack-flavor-du.yaml")
    assert isinstance(vm, VmDescriptor)
    assert vm.name == "vran.du.large"
    (cpu_set,) = vm.cpu_sets
    assert cpu_set.vcpus == tuple(range(4))
    assert cpu_set.hugepages is not None
    assert (cpu_set.hugepages.size_kib, cpu_set.hugepages.count) == (1024 * 1024, 8)
    assert vm.realtime_vcpus == tuple(range(2, 4))
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
    assert vm.cpu_sets[0].hugepages.size == "large"  # chosen on the host node


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


@pytest.mark.parametrize(
    ("spec", "value", "accepted"),
    [
        ("hw:cpu_policy", "dedicatedd", "'shared', 'dedicated', 'mixed'"),
        ("hw:cpu_thread_policy", "avoid", "'prefer', 'isolate', 'require'"),
        ("hw:emulator_threads_policy", "isolated", "'share', 'isolate'"),
        ("hw:mem_page_size", "3MB", "power-of-two size"),
        ("hw:mem_page_size", "huge", "'small', 'large', 'any'"),
    ],
)
def test_values_outside_novas_vocabulary_are_lint_errors(
    spec: str, value: str, accepted: str
) -> None:
    text = f"name: f\nvcpus: 2\nram: 1024\nextra_specs:\n  hw:cpu_policy: dedicated\n  {spec}: {value}\n"
    result = lint_text(text, "f.yaml")
    errors = [f for f in result.findings if f.severity.value == "error"]
    assert errors, result.findings
    assert errors[0].path == f"extra_specs.{spec}"
    assert value in errors[0].message
    assert accepted in errors[0].message


def test_dedicated_without_thread_policy_is_novas_prefer() -> None:
    conversion = convert(
        {"name": "f", "vcpus": 2, "ram": 1024, "extra_specs": {"hw:cpu_policy": "dedicated"}}
    )
    assert VmDescriptor.model_validate(conversion.data).cpu_thread_policy.value == "prefer"
    assert any("default 'prefer'" in n.message and n.kind == "assumed" for n in conversion.notes)


def test_traits_resources_and_masks_are_carried_or_reported() -> None:
    conversion = convert(
        {
            "name": "f",
            "vcpus": 4,
            "ram": 4096,
            "extra_specs": {
                "resources:PCPU": "4",
                "resources:VGPU": "1",
                "trait:HW_CPU_X86_AVX512F": "required",
                "trait:HW_CPU_X86_SSE42": "required",
                "trait:CUSTOM_FAST": "required",
                "quota:cpu_shares": "2048",
            },
        }
    )
    vm = VmDescriptor.model_validate(conversion.data)
    assert vm.cpu_sets
    assert vm.processor is not None
    assert vm.processor.required_flags == ("avx512f", "sse4_2")
    reported = {n.path[-1] for n in conversion.notes}
    assert {"resources:VGPU", "trait:CUSTOM_FAST", "quota:cpu_shares"} <= reported


def test_mixed_policy_names_the_floating_vcpus() -> None:
    specs = {"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "2-3"}
    conversion = convert({"name": "f", "vcpus": 4, "ram": 4096, "extra_specs": specs})
    (note,) = [n for n in conversion.notes if "mixed" in n.message]
    assert "[0, 1] float" in note.message
    assert note.kind == "assumed"


def test_a_shared_flavor_keeps_its_guest_numa_topology_as_floating_cpu_sets() -> None:
    specs = {
        "hw:numa_nodes": "2",
        "hw:numa_cpus.0": "0",
        "hw:numa_cpus.1": "1,2",
        "hw:numa_mem.0": "1024",
        "hw:numa_mem.1": "2048",
        "hw:mem_page_size": "2MB",
    }
    conversion = convert({"flavor": {"name": "f", "vcpus": 3, "ram": 3072, "extra_specs": specs}})
    assert conversion.notes == ()
    data = conversion.data
    assert data["cpu_oversubscription"] is True
    assert [(cs["vcpus"], cs["memory_mib"], cs["floating"]) for cs in data["cpu_sets"]] == [
        ([0], 1024, True),
        ([1, 2], 2048, True),
    ]
    assert data["cpu_sets"][1]["hugepages"] == {"size": "2048KiB", "count": 1024}
    assert "vcpus" not in data  # derived from the cpu-sets
    plain = convert({"flavor": {"name": "p", "vcpus": 2, "ram": 1024, "extra_specs": {}}}).data
    assert "cpu_sets" not in plain


def test_assumptions_are_info_findings() -> None:
    text = "name: f\nvcpus: 2\nram: 1024\nextra_specs:\n  hw:cpu_policy: dedicated\n"
    (note,) = [f for f in lint_text(text, "f.yaml").findings if f.rule == "NFV006"]
    assert note.severity.value == "info"
    assert note.path == "extra_specs.hw:cpu_policy"
    assert "prefer" in note.message
