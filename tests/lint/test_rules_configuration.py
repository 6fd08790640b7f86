"""Every VM Configuration rule: a failing configuration (rule id, path, line) and a passing one."""

from __future__ import annotations

import pytest

from .cases import Case, check

HEAD = "schema: nfvplace/vm-configuration/v1\nvm: v\nhost: h\n"
SET0 = "  - id: 0\n    numa_node: 0\n    vcpu_pins: {0: 2, 1: 42}\n    memory_mib: 2048\n"
SET1 = "  - id: 1\n    numa_node: 1\n    vcpu_pins: {2: 3, 3: 43}\n    memory_mib: 2048\n"


def conf(body: str) -> str:
    return HEAD + body


GOOD = conf("cpu_sets:\n" + SET0 + SET1)

CASES = [
    Case(
        "NFV813",
        "cpu_sets",
        conf("cpu_sets: #<\n" + SET0 + SET1.replace("{2: 3, 3: 43}", "{2: 3, 7: 43}")),
        GOOD,
    ),
    Case(
        "NFV801",
        "cpu_sets[1].vcpu_pins.3",
        conf("cpu_sets:\n" + SET0 + SET1.replace("{2: 3, 3: 43}", "\n      2: 3\n      3: 42 #<")),
        GOOD,
    ),
    Case(
        "NFV801",
        "emulator_pins[0]",
        conf("cpu_sets:\n" + SET0 + "emulator_pins:\n  - 42 #<\n"),
        conf("cpu_sets:\n" + SET0 + "emulator_pins: [5]\n"),
    ),
    Case(
        "NFV801",
        "cpu_sets[0].reserved_siblings[0]",
        conf(
            "cpu_sets:\n  - id: 0\n    numa_node: 0\n    vcpu_pins: {0: 2}\n    memory_mib: 1024\n"
            "    reserved_siblings:\n      - 2 #<\n"
        ),
        conf(
            "cpu_sets:\n  - id: 0\n    numa_node: 0\n    vcpu_pins: {0: 2}\n    memory_mib: 1024\n"
            "    reserved_siblings: [42]\n"
        ),
    ),
    Case(
        "NFV802",
        "cpu_sets[1].vcpu_pins.1",
        conf("cpu_sets:\n" + SET0 + SET1.replace("{2: 3, 3: 43}", "\n      1: 3 #<\n      3: 43")),
        GOOD,
    ),
    Case(
        "NFV803",
        "vcpus",
        conf("vcpus: 5 #<\ncpu_sets:\n" + SET0 + SET1),
        conf("vcpus: 4\ncpu_sets:\n" + SET0 + SET1),
    ),
    Case(
        "NFV804",
        "realtime_vcpus[0]",
        conf(
            "cpu_sets:\n" + SET0 + "shared: {vcpus: 2, cpus: [10, 11]}\nrealtime_vcpus:\n  - 2 #<\n"
        ),
        conf("cpu_sets:\n" + SET0 + "shared: {vcpus: 2, cpus: [10, 11]}\nrealtime_vcpus: [1]\n"),
    ),
    Case(
        "NFV805",
        "cpu_sets[0].hugepages",
        conf("cpu_sets:\n" + SET0 + "    hugepages: {size_kib: 1048576, count: 3} #<\n"),
        conf("cpu_sets:\n" + SET0 + "    hugepages: {size_kib: 1048576, count: 2}\n"),
    ),
    Case(
        "NFV806",
        "interfaces[0].cpu_set",
        conf(
            "cpu_sets:\n"
            + SET0
            + "interfaces:\n  - name: e\n    mode: vswitch\n    cpu_set: 4 #<\n"
        ),
        conf("cpu_sets:\n" + SET0 + "interfaces:\n  - {name: e, mode: vswitch, cpu_set: 0}\n"),
    ),
    Case(
        "NFV807",
        "interfaces[0].numa_node",
        conf(
            "cpu_sets:\n" + SET0 + "interfaces:\n  - name: e\n    mode: sriov\n"
            '    pci_address: "0000:af:02.1"\n    cpu_set: 0\n    numa_node: 1 #<\n'
        ),
        conf(
            "cpu_sets:\n" + SET0 + "interfaces:\n"
            '  - {name: e, mode: sriov, pci_address: "0000:af:02.1", cpu_set: 0, numa_node: 0}\n'
        ),
    ),
    Case(
        "NFV808",
        "memory_mib",
        conf("memory_mib: 1024 #<\ncpu_sets:\n" + SET0),
        conf("memory_mib: 2048\ncpu_sets:\n" + SET0),
    ),
    Case(
        "NFV809",
        "cpu_set_links[0].cpu_sets[1]",
        conf(
            "cpu_sets:\n"
            + SET0
            + SET1
            + "cpu_set_links:\n  - {cpu_sets: [0, 2], numa_nodes: [0, 1], bandwidth_mbps: 1} #<\n"
        ),
        conf(
            "cpu_sets:\n"
            + SET0
            + SET1
            + "cpu_set_links:\n  - {cpu_sets: [0, 1], numa_nodes: [0, 1], bandwidth_mbps: 1}\n"
        ),
    ),
    Case(
        "NFV810",
        "cpu_sets[1].id",
        conf("cpu_sets:\n" + SET0 + SET1.replace("  - id: 1\n", "  - id: 0 #<\n")),
        GOOD,
    ),
    Case(
        "NFV811",
        "interfaces[0]",
        conf("cpu_sets:\n" + SET0 + "interfaces:\n  - {name: e, mode: dedicated, cpu_set: 0} #<\n"),
        conf(
            "cpu_sets:\n"
            + SET0
            + 'interfaces:\n  - {name: e, mode: dedicated, cpu_set: 0, pci_address: "0000:af:00.0"}\n'
        ),
    ),
    Case(
        "NFV812",
        "realtime_vcpus[0]",
        conf("cpu_sets:\n" + SET0 + "realtime_vcpus:\n  - 9 #<\n"),
        conf("cpu_sets:\n" + SET0 + "realtime_vcpus: [1]\n"),
    ),
    Case(
        "NFV502",
        "interfaces[1].pci_address",
        conf(
            "cpu_sets:\n" + SET0 + "interfaces:\n"
            '  - {name: a, mode: sriov, pci_address: "0000:af:02.1"}\n'
            '  - {name: b, mode: sriov, pci_address: "0000:AF:02.1"} #<\n'
        ),
        conf(
            "cpu_sets:\n" + SET0 + "interfaces:\n"
            '  - {name: a, mode: sriov, pci_address: "0000:af:02.1"}\n'
            '  - {name: b, mode: sriov, pci_address: "0000:af:02.2"}\n'
        ),
    ),
    Case(
        "NFV503",
        "interfaces[0].physical_function",
        conf(
            "cpu_sets:\n" + SET0 + "interfaces:\n  - name: a\n    mode: sriov\n"
            '    pci_address: "0000:af:02.1"\n    physical_function: "0000:af:02.1" #<\n'
        ),
        conf(
            "cpu_sets:\n" + SET0 + "interfaces:\n"
            '  - {name: a, mode: sriov, pci_address: "0000:af:02.1", physical_function: "0000:af:00.0"}\n'
        ),
    ),
    Case(
        "NFV501",
        "interfaces[0].pci_address",
        conf(
            "cpu_sets:\n"
            + SET0
            + "interfaces:\n  - name: a\n    mode: sriov\n    pci_address: af:02.1 #<\n"
        ),
        conf(
            "cpu_sets:\n"
            + SET0
            + 'interfaces:\n  - {name: a, mode: sriov, pci_address: "0000:af:02.1"}\n'
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    check(case)
