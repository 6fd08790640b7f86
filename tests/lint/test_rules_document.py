"""Document rules (syntax, schema, units, kind) and the variant rules, table-driven."""

from __future__ import annotations

import pytest

from nfvplace.lint import Severity, lint_text

from .cases import Case, check, findings

VM = "schema: nfvplace/vmd/v1\nname: t\n"
PINNED = "hypervisor: {required_capabilities: [cpu_pinning, hugepage_numa_pinning]}\n"

CASES = [
    Case(
        "NFV001",
        "cpu_oversubscriptin",
        VM + "vcpus: 2\nmemory_mib: 512\ncpu_oversubscriptin: true #<\n",
        VM + "vcpus: 2\nmemory_mib: 512\ncpu_oversubscription: true\n",
    ),
    Case(
        "NFV001",
        "cpu_sets[0].hugepages.count",
        VM + PINNED + "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 2048\n"
        "    hugepages:\n      size: 1GiB\n      count: two #<\n",
        VM + PINNED + "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 2048\n"
        "    hugepages:\n      size: 1GiB\n      count: 2\n",
    ),
    Case(
        "NFV001",
        "cpu_thread_policy",
        VM + "vcpus: 2\nmemory_mib: 512\ncpu_thread_policy: isolated #<\n",
        VM + "vcpus: 2\nmemory_mib: 512\ncpu_thread_policy: isolate\n",
    ),
    Case(
        "NFV002",
        "cpu_sets[0].memory_mib",
        VM + PINNED + "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 10GB #<\n",
        VM + PINNED + "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 10GiB\n",
    ),
    Case(
        "NFV003",
        "",
        "name: t #<\nvcpus: 2\n",
        VM + "vcpus: 2\nmemory_mib: 512\n",
    ),
    Case(
        "NFV003",
        "schema",
        "schema: nfvplace/vmd/v2 #<\nname: t\n",
        VM + "vcpus: 2\nmemory_mib: 512\n",
    ),
    Case(
        "NFV000",
        "",
        VM + "vcpus: [1, 2\nmemory_mib: 512 #<\n",
        VM + "vcpus: 2\nmemory_mib: 512\n",
    ),
    Case(
        "NFV901",
        "variants[1].name",
        VM + "vcpus: 2\nmemory_mib: 512\nvariants:\n"
        "  - {name: a, match: {processor_vendor: AuthenticAMD}, vcpus: 4}\n"
        "  - {name: a, match: {hypervisor_type: xen}, vcpus: 4} #<\n",
        VM + "vcpus: 2\nmemory_mib: 512\nvariants:\n"
        "  - {name: a, match: {processor_vendor: AuthenticAMD}, vcpus: 4}\n"
        "  - {name: b, match: {hypervisor_type: xen}, vcpus: 4}\n",
    ),
    Case(
        "NFV902",
        "variants[0].match",
        VM + "vcpus: 2\nmemory_mib: 512\nvariants:\n  - name: a\n    match: {} #<\n    vcpus: 4\n",
        VM + "vcpus: 2\nmemory_mib: 512\nvariants:\n"
        "  - name: a\n    match: {min_frequency_mhz: 2700}\n    vcpus: 1\n",
    ),
    Case(
        "NFV903",
        "variants[1].match",
        VM + "vcpus: 2\nmemory_mib: 512\nvariants:\n"
        "  - {name: a, match: {hypervisor_type: xen}, vcpus: 4}\n"
        "  - {name: b, match: {hypervisor_type: xen}, vcpus: 3} #<\n",
        VM + "vcpus: 2\nmemory_mib: 512\nvariants:\n"
        "  - {name: a, match: {hypervisor_type: xen}, vcpus: 4}\n"
        "  - {name: b, match: {hypervisor_type: vmware}, vcpus: 3}\n",
    ),
    Case(
        "NFV904",
        "variants[0]",
        VM
        + "vcpus: 2\nmemory_mib: 512\nvariants:\n  - {name: a, match: {hypervisor_type: xen}} #<\n",
        VM + "vcpus: 2\nmemory_mib: 512\nvariants:\n"
        "  - {name: a, match: {hypervisor_type: xen}, memory_mib: 1024}\n",
    ),
    Case(
        "NFV905",
        "variants[0]",
        VM
        + PINNED
        + "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\nvariants:\n"
        + "  - name: none #<\n    match: {hypervisor_type: xen}\n    cpu_sets: []\n",
        VM
        + PINNED
        + "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\nvariants:\n"
        + "  - name: none\n    match: {hypervisor_type: xen}\n    cpu_sets: []\n    vcpus: 1\n"
        + "    memory_mib: 512\n",
    ),
    # A variant's own cpu-sets are checked with the variant applied, and reported under it.
    Case(
        "NFV101",
        "variants[0].cpu_sets[1].vcpus[0]",
        VM + PINNED + "cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\nvariants:\n"
        "  - name: slow-cpu\n    match: {min_frequency_mhz: 1800}\n    cpu_sets:\n"
        "      - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"
        "      - {id: 1, vcpus: [1, 2], memory_mib: 1024} #<\n",
        VM + PINNED + "cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\nvariants:\n"
        "  - name: slow-cpu\n    match: {min_frequency_mhz: 1800}\n    cpu_sets:\n"
        "      - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"
        "      - {id: 1, vcpus: [2, 3], memory_mib: 1024}\n",
    ),
    # Realtime vCPUs of the base must exist in a variant's cpu-sets too.
    Case(
        "NFV106",
        "realtime_vcpus[0]",
        VM + PINNED + "realtime_vcpus:\n  - 3 #<\n"
        "cpu_sets:\n  - {id: 0, vcpus: [0, 1, 2, 3], memory_mib: 1024}\nvariants:\n"
        "  - name: small\n    match: {min_frequency_mhz: 3000}\n"
        "    cpu_sets: [{id: 0, vcpus: [0, 1], memory_mib: 1024}]\n",
        VM + PINNED + "realtime_vcpus: [1]\n"
        "cpu_sets:\n  - {id: 0, vcpus: [0, 1, 2, 3], memory_mib: 1024}\nvariants:\n"
        "  - name: small\n    match: {min_frequency_mhz: 3000}\n"
        "    cpu_sets: [{id: 0, vcpus: [0, 1], memory_mib: 1024}]\n",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    check(case)


def test_unknown_field_suggests_the_closest_name() -> None:
    (finding,) = [
        f for f in findings(VM + "vcpus: 2\nmemory_mib: 512\nvcpu: 2\n") if f.rule == "NFV001"
    ]
    assert finding.hint == "did you mean 'vcpus'?"
    assert finding.line == 5


def test_unknown_enum_value_suggests_the_closest() -> None:
    text = (
        VM
        + "vcpus: 2\nmemory_mib: 512\nhypervisor: {required_capabilities: [numa_memory_pining]}\n"
    )
    (finding,) = [f for f in findings(text) if f.rule == "NFV601"]
    assert finding.hint == "did you mean 'numa_memory_pinning'?"


def test_variant_message_names_the_variant() -> None:
    text = (
        VM + PINNED + "cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\nvariants:\n"
        "  - name: big\n    match: {hypervisor_type: xen}\n"
        "    cpu_sets: [{id: 0, vcpus: [0, 1], memory_mib: 1024, hugepages: {size: 1GiB, count: 2}}]\n"
    )
    (finding,) = [f for f in findings(text) if f.rule == "NFV201"]
    assert finding.path == "variants[0].cpu_sets[0].hugepages"
    assert "with variant 'big'" in finding.message
    assert "2048 MiB" in finding.message


def test_base_findings_are_not_repeated_per_variant() -> None:
    text = (
        VM + PINNED + "cpu_sets:\n  - {id: 0, vcpus: [1, 2], memory_mib: 1024}\nvariants:\n"
        "  - {name: a, match: {hypervisor_type: xen}, memory_mib: 1024}\n"
    )
    assert [f.rule for f in findings(text)].count("NFV104") == 1


@pytest.mark.parametrize(
    "text",
    ["", "[1, 2, 3]\n", "just a string\n", "42\n"],
    ids=["empty", "list", "string", "number"],
)
def test_non_descriptors_are_nfv003(text: str) -> None:
    result = lint_text(text, "x.yaml")
    assert [f.rule for f in result.findings] == ["NFV003"]
    assert result.findings[0].severity is Severity.error


def test_python_tag_is_a_syntax_finding() -> None:
    result = lint_text("!!python/object/apply:os.system ['true']\n", "x.yaml")
    assert [f.rule for f in result.findings] == ["NFV000"]
    assert not result.unreadable


@pytest.mark.parametrize("key", ["[", "a[b]", "list[int]", "[key]"])
def test_unknown_fields_with_brackets_keep_their_name(key: str) -> None:
    text = VM + f'vcpus: 1\nmemory_mib: 512\n"{key}": 1\n'
    (finding,) = findings(text)
    assert (finding.rule, finding.path, finding.line) == ("NFV001", key, 5)
    assert finding.message == f"unknown field '{key}'"
