"""Every VM Descriptor rule: a failing descriptor (rule id, path, line) and a passing one."""

from __future__ import annotations

import pytest

from nfvplace.lint.findings import Hit
from nfvplace.lint.rules import variants as variants_rules
from nfvplace.models.vmd import VmDescriptor

from .cases import Case, check, findings

HEAD = """\
schema: nfvplace/vmd/v1
name: t
hypervisor: {required_capabilities: [cpu_pinning, hugepage_numa_pinning, iommu]}
"""


def vmd(body: str) -> str:
    return HEAD + body


CASES = [
    Case(
        "NFV050",
        "impact.benchmark_class",
        vmd(
            "cpu_sets:\n"
            "  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"
            "impact:\n"
            "  benchmark_class: B #<\n"
        ),
        vmd("cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"),
    ),
    Case(
        "NFV101",
        "cpu_sets[1].vcpus[0]",
        vmd(
            "cpu_sets:\n"
            "  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"
            "  - {id: 1, vcpus: [1, 2], memory_mib: 1024} #<\n"
        ),
        vmd(
            "cpu_sets:\n"
            "  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"
            "  - {id: 1, vcpus: [2, 3], memory_mib: 1024}\n"
        ),
    ),
    Case(
        "NFV102",
        "cpu_sets[0].howtogroup[0]",
        vmd(
            "cpu_sets:\n"
            "  - id: 0\n"
            "    vcpus: [0, 1]\n"
            "    howtogroup: [[0, 5]] #<\n"
            "    memory_mib: 1024\n"
        ),
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0, 1]\n    howtogroup: [[0, 1]]\n    memory_mib: 1024\n"
        ),
    ),
    Case(
        "NFV103",
        "cpu_sets[0].howtogroup[1]",
        vmd(
            "cpu_sets:\n"
            "  - id: 0\n"
            "    vcpus: [0, 1, 2, 3]\n"
            "    howtogroup:\n"
            "      - [0, 1]\n"
            "      - [1, 2] #<\n"
            "    memory_mib: 1024\n"
        ),
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0, 1, 2, 3]\n"
            "    howtogroup: [[0, 1], [2, 3]]\n    memory_mib: 1024\n"
        ),
    ),
    Case(
        "NFV103",
        "cpu_sets[0].howtogroup[0]",
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0, 1]\n"
            "    howtogroup: [[1, 1]] #<\n    memory_mib: 1024\n"
        ),
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0, 1]\n    howtogroup: [[0, 1]]\n    memory_mib: 1024\n"
        ),
    ),
    Case(
        "NFV104",
        "cpu_sets",
        vmd("cpu_sets: #<\n  - {id: 0, vcpus: [1, 2], memory_mib: 1024}\n"),
        vmd("cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"),
    ),
    Case(
        "NFV105",
        "vcpus",
        vmd("vcpus: 3 #<\ncpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"),
        vmd("vcpus: 2\ncpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"),
    ),
    Case(
        "NFV106",
        "realtime_vcpus[1]",
        vmd(
            "realtime_vcpus:\n  - 1\n  - 7 #<\n"
            "cpu_sets:\n  - {id: 0, vcpus: [0, 1, 2], memory_mib: 1024}\n"
        ),
        vmd("realtime_vcpus: [1, 2]\ncpu_sets:\n  - {id: 0, vcpus: [0, 1, 2], memory_mib: 1024}\n"),
    ),
    Case(
        "NFV106",
        "realtime_vcpus[0]",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 2\nmemory_mib: 512\nrealtime_vcpus: [2] #<\n",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 2\nmemory_mib: 512\nrealtime_vcpus: [1]\n",
    ),
    Case(
        "NFV107",
        "cpu_sets[0].howtogroup",
        vmd(
            "cpu_thread_policy: require\ncpu_sets:\n  - id: 0\n    vcpus: [0, 1, 2]\n"
            "    howtogroup: [[0, 1]] #<\n    memory_mib: 1024\n"
        ),
        vmd(
            "cpu_thread_policy: require\ncpu_sets:\n  - id: 0\n    vcpus: [0, 1, 2, 3]\n"
            "    howtogroup: [[0, 1], [2, 3]]\n    memory_mib: 1024\n"
        ),
    ),
    Case(
        "NFV108",
        "realtime_vcpus",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 4\nmemory_mib: 512\n"
        "cpu_oversubscription: true\nrealtime_vcpus: [1] #<\n",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 4\nmemory_mib: 512\nrealtime_vcpus: [1]\n",
    ),
    Case(
        "NFV109",
        "cpu_oversubscription",
        vmd(
            "cpu_oversubscription: true #<\n"
            "cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"
        ),
        vmd("cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"),
    ),
    Case(
        "NFV110",
        "cpu_sets[1].id",
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"
            "  - {id: 0, vcpus: [1], memory_mib: 1024} #<\n"
        ),
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"
            "  - {id: 1, vcpus: [1], memory_mib: 1024}\n"
        ),
    ),
    Case(
        "NFV111",
        "cpu_set_bandwidth[0].cpu_sets[1]",
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"
            "  - {id: 1, vcpus: [1], memory_mib: 1024}\n"
            "cpu_set_bandwidth:\n  - {cpu_sets: [0, 3], bandwidth_mbps: 100} #<\n"
        ),
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"
            "  - {id: 1, vcpus: [1], memory_mib: 1024}\n"
            "cpu_set_bandwidth:\n  - {cpu_sets: [0, 1], bandwidth_mbps: 100}\n"
        ),
    ),
    Case(
        "NFV112",
        "cpu_set_bandwidth[0].cpu_sets",
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"
            "cpu_set_bandwidth:\n  - {cpu_sets: [0, 0], bandwidth_mbps: 100} #<\n"
        ),
        vmd("cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"),
    ),
    Case(
        "NFV113",
        "cpu_set_bandwidth[1]",
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"
            "  - {id: 1, vcpus: [1], memory_mib: 1024}\n"
            "cpu_set_bandwidth:\n  - {cpu_sets: [0, 1], bandwidth_mbps: 100}\n"
            "  - {cpu_sets: [1, 0], bandwidth_mbps: 50} #<\n"
        ),
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"
            "  - {id: 1, vcpus: [1], memory_mib: 1024}\n"
            "cpu_set_bandwidth:\n  - {cpu_sets: [0, 1], bandwidth_mbps: 150}\n"
        ),
    ),
    Case(
        "NFV114",
        "emulator_threads",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 2\nmemory_mib: 512\nemulator_threads: isolate #<\n",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 2\nmemory_mib: 512\nemulator_threads: share\n",
    ),
    Case(
        "NFV115",
        "realtime_vcpus",
        vmd("realtime_vcpus: [0, 1] #<\ncpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"),
        vmd("realtime_vcpus: [1]\ncpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"),
    ),
    Case(
        "NFV116",
        "cpu_sets[0].howtogroup[1]",
        vmd(
            "realtime_vcpus: [2, 3]\ncpu_sets:\n  - id: 0\n    vcpus: [0, 1, 2, 3]\n"
            "    howtogroup:\n      - [0, 1]\n      - [2, 3] #<\n    memory_mib: 1024\n"
        ),
        vmd(
            "realtime_vcpus: [2, 3]\ncpu_sets:\n  - id: 0\n    vcpus: [0, 1, 2, 3]\n"
            "    howtogroup: [[0, 1]]\n    memory_mib: 1024\n"
        ),
    ),
    Case(
        "NFV117",
        "cpu_thread_policy",
        vmd(
            "cpu_thread_policy: prefer #<\nrealtime_vcpus: [1]\n"
            "cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"
        ),
        vmd("realtime_vcpus: [1]\ncpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024}\n"),
    ),
    Case(
        "NFV504",
        "pci_devices[0].numa_affinity",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 2\nmemory_mib: 512\ncpu_oversubscription: true\n"
        "pci_devices:\n  - class: crypto\n    numa_affinity: preferred #<\n",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 2\nmemory_mib: 512\ncpu_oversubscription: true\n"
        "pci_devices:\n  - class: crypto\n",
    ),
    Case(
        "NFV118",
        "cpu_sets[0].floating",
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0, 1]\n    howtogroup: [[0, 1]]\n"
            "    memory_mib: 1024\n    floating: true #<\n"
        ),
        vmd("cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024, floating: true}\n"),
    ),
    Case(
        "NFV119",
        "cpu_sets",
        vmd(
            "cpu_sets: #<\n  - {id: 0, vcpus: [0], memory_mib: 1024, floating: true}\n"
            "  - {id: 1, vcpus: [1], memory_mib: 1024}\n"
        ),
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024, floating: true}\n"
            "  - {id: 1, vcpus: [1], memory_mib: 1024, floating: true}\n"
        ),
    ),
    Case(
        "NFV120",
        "emulator_threads",
        vmd(
            "emulator_threads: isolate #<\n"
            "cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024, floating: true}\n"
        ),
        vmd(
            "emulator_threads: share\n"
            "cpu_sets:\n  - {id: 0, vcpus: [0, 1], memory_mib: 1024, floating: true}\n"
        ),
    ),
    Case(
        "NFV207",
        "cpu_sets[0].hugepages.size",
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1025\n"
            "    hugepages:\n      size: large #<\n"
        ),
        vmd("cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024, hugepages: {size: large}}\n"),
    ),
    Case(
        "NFV201",
        "cpu_sets[0].hugepages",
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n"
            "    hugepages: {size: 1GiB, count: 2} #<\n"
        ),
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 2048\n"
            "    hugepages: {size: 1GiB, count: 2}\n"
        ),
    ),
    Case(
        "NFV202",
        "memory_mib",
        vmd("memory_mib: 4096 #<\ncpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"),
        vmd("memory_mib: 1024\ncpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"),
    ),
    Case(
        "NFV203",
        "cpu_sets[0].hugepages.size",
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n"
            "    hugepages:\n      size: 4MiB #<\n      count: 2\n"
        ),
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n"
            "    hugepages:\n      size: 2MiB\n      count: 2\n"
        ),
    ),
    Case(
        "NFV204",
        "cpu_sets[0].memory_mib",
        vmd("cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 0 #<\n"),
        vmd("cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 512\n"),
    ),
    Case(
        "NFV205",
        "memory_oversubscription",
        vmd(
            "memory_oversubscription: true #<\ncpu_sets:\n"
            "  - {id: 0, vcpus: [0], memory_mib: 1024, hugepages: {size: 1GiB, count: 1}}\n"
        ),
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024, hugepages: {size: 1GiB, count: 1}}\n"
        ),
    ),
    Case(
        "NFV206",
        "cpu_sets[0].hugepages.count",
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n"
            "    hugepages:\n      size: 1GiB\n      count: 0 #<\n"
        ),
        vmd("cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n"),
    ),
    Case(
        "NFV301",
        "cpu_sets[0].interfaces[0].bandwidth_gbps",
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n    interfaces:\n"
            "      - name: eth0\n        mode: sriov\n        speed_gbps: 10\n"
            "        bandwidth_gbps: 20 #<\n"
        ),
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n    interfaces:\n"
            "      - {name: eth0, mode: sriov, speed_gbps: 10, bandwidth_gbps: 10}\n"
        ),
    ),
    Case(
        "NFV301",
        "interfaces[0].bandwidth_gbps",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\ninterfaces:\n"
        "  - {name: e, speed_gbps: 1, bandwidth_gbps: 1500 Mbps} #<\n",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\ninterfaces:\n"
        "  - {name: e, speed_gbps: 1, bandwidth_gbps: 500 Mbps}\n",
    ),
    Case(
        "NFV302",
        "interfaces[0].name",
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n    interfaces:\n"
            "      - {name: eth0, mode: vswitch}\ninterfaces:\n  - {name: eth0} #<\n"
        ),
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n    interfaces:\n"
            "      - {name: eth0, mode: vswitch}\ninterfaces:\n  - {name: eth1}\n"
        ),
    ),
    Case(
        "NFV303",
        "cpu_sets[0].interfaces[0]",
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n    interfaces:\n"
            "      - {name: eth0, mode: dedicated} #<\n"
        ),
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n    interfaces:\n"
            "      - {name: eth0, mode: dedicated, speed_gbps: 25}\n"
        ),
    ),
    Case(
        "NFV304",
        "cpu_sets[0].interfaces[0].restricted_to_topology",
        vmd(
            "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n    interfaces:\n"
            "      - name: eth0\n        restricted_to_topology: false #<\n"
        ),
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\ninterfaces:\n  - {name: eth0}\n"
        ),
    ),
    Case(
        "NFV601",
        "hypervisor.required_capabilities[0]",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\nhypervisor:\n"
        "  required_capabilities:\n    - cpu_pining #<\n",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\nhypervisor:\n"
        "  required_capabilities:\n    - cpu_pinning\n",
    ),
    Case(
        "NFV601",
        "hypervisor.required_capability_sets[0]",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\nhypervisor:\n"
        "  required_capability_sets: [io_virtualisation] #<\n",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\nhypervisor:\n"
        "  required_capability_sets: [io_virtualization]\n",
    ),
    Case(
        "NFV604",
        "hypervisor",
        "schema: nfvplace/vmd/v1\nname: t\nhypervisor: {required_capabilities: [cpu_pinning]} #<\n"
        "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024, hugepages: {size: 1GiB, count: 1}}\n",
        vmd(
            "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024, hugepages: {size: 1GiB, count: 1}}\n"
        ),
    ),
    Case(
        "NFV605",
        "hypervisor",
        "schema: nfvplace/vmd/v1\nname: t\nhypervisor: {required_capabilities: [cpu_pinning]} #<\n"
        "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n"
        "    interfaces: [{name: e, mode: sriov, speed_gbps: 10}]\n",
        "schema: nfvplace/vmd/v1\nname: t\n"
        "hypervisor: {required_capabilities: [cpu_pinning], required_capability_sets: [io_virtualization]}\n"
        "cpu_sets:\n  - id: 0\n    vcpus: [0]\n    memory_mib: 1024\n"
        "    interfaces: [{name: e, mode: sriov, speed_gbps: 10}]\n",
    ),
    Case(
        "NFV606",
        "hypervisor",
        "schema: nfvplace/vmd/v1\nname: t\nhypervisor: {type: kvm} #<\n"
        "cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n",
        vmd("cpu_sets:\n  - {id: 0, vcpus: [0], memory_mib: 1024}\n"),
    ),
    Case(
        "NFV607",
        "processor.required_flags[1]",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\n"
        "processor:\n  required_flags:\n    - aes\n    - aes #<\n",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\n"
        "processor:\n  required_flags: [aes]\n",
    ),
    Case(
        "NFV608",
        "processor.model",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\n"
        "processor:\n  model: Intel(R) Xeon(R) CPU E3-1230 v5 @ 3.40GHz #<\n",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\n"
        "processor:\n  model: Intel(R) Xeon(R) Gold 6338N CPU @ 2.20GHz\n",
    ),
    Case(
        "NFV608",
        "variants[0].processor.model",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\n"
        "processor: {model: AMD EPYC 7763 64-Core Processor}\n"
        "variants:\n  - name: old\n    match: {processor_vendor: AuthenticAMD}\n"
        "    processor: {model: AMD EPYC 3251 8-Core Processor} #<\n",
        "schema: nfvplace/vmd/v1\nname: t\nvcpus: 1\nmemory_mib: 512\n"
        "processor: {model: AMD EPYC 7763 64-Core Processor}\n"
        "variants:\n  - name: old\n    match: {processor_vendor: AuthenticAMD}\n"
        "    processor: {model: AMD EPYC 7502P 32-Core Processor}\n",
    ),
]


def test_unknown_generation_names_the_family_it_falls_back_to() -> None:
    text = vmd("vcpus: 1\nmemory_mib: 512\nprocessor: {model: Intel(R) Xeon(R) CPU}\n")
    (finding,) = [f for f in findings(text) if f.rule == "NFV608"]
    assert "falls back to matching by family name ('intel xeon')" in finding.message


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    check(case)


@pytest.mark.parametrize(("variants", "runs"), [(0, 0), (1, 2), (2, 3)])
def test_the_variant_rules_run_the_checks_on_the_base_only_for_a_variant(
    variants: int, runs: int
) -> None:
    """A descriptor without variants is checked once (by `check_vmd`), not again by the variant
    rules; with variants, the base once (the hits it has itself) and each applied variant once."""
    vm = VmDescriptor.model_validate(
        {
            "name": "t",
            "vcpus": 1,
            "memory_mib": 512,
            "variants": [
                {"name": f"v{k}", "match": {"processor_vendor": f"V{k}"}, "vcpus": 2}
                for k in range(variants)
            ],
        }
    )
    seen: list[VmDescriptor] = []

    def check_vcpus(model: VmDescriptor) -> list[Hit]:
        seen.append(model)
        return []

    assert list(variants_rules.check_vmd(vm, [check_vcpus])) == []
    assert len(seen) == runs
    assert [model.vcpus for model in seen] == [1, *[2] * variants][:runs]
