"""Every Compute Host Descriptor rule: a failing host (rule id, path, line) and a passing one."""

from __future__ import annotations

import pytest

from .cases import Case, check

GOOD_CPUS = """\
      - {id: 0, core: 0, siblings: [0, 2]}
      - {id: 1, core: 1, siblings: [1, 3]}
      - {id: 2, core: 0, siblings: [0, 2]}
      - {id: 3, core: 1, siblings: [1, 3]}
"""
GOOD_MEMORY = "    memory: {total_mib: 8192, hugepages: [{size_kib: 1048576, total: 4, used: 1}]}\n"
GOOD_NICS = """\
    nics:
      - vendor: Intel
        model: E810
        ports:
          - pci_address: "0000:18:00.0"
            speed_gbps: 25
            usage: sriov
            vfs:
              - {pci_address: "0000:18:01.0", in_use: true, owner: vm-1}
              - {pci_address: "0000:18:01.1"}
"""


def chd(
    cpus: str = GOOD_CPUS,
    memory: str = GOOD_MEMORY,
    nics: str = GOOD_NICS,
    head: str = "",
    tail: str = "",
) -> str:
    return (
        "schema: nfvplace/chd/v1\nid: host-1\n"
        "processor: {vendor: GenuineIntel, model: Xeon}\n"
        + head
        + "numa_nodes:\n  - id: 0\n    cpus:\n"
        + cpus
        + memory
        + nics
        + tail
    )


CACHE = """\
cache_allocation:
  classes: 4
  domains:
    - id: 0
      numa_nodes: [0]
      ways: 11
      allocations:
        - ALLOC
"""

TWO_NODES = (
    "schema: nfvplace/chd/v1\nid: h\nprocessor: {vendor: V, model: M}\nnuma_nodes:\n"
    "  - id: 0\n    cpus: [{id: 0, core: 0, siblings: [0]}]\n    memory: {total_mib: 1024}\n"
    "  - id: 1\n    cpus: [{id: 1, core: CORE, siblings: [1]}] #<\n    memory: {total_mib: 1024}\n"
)

CASES = [
    Case(
        "NFV130",
        "cache_allocation.domains[0].allocations[0]",
        chd(tail=CACHE.replace("ALLOC", "{first_way: 10, ways: 2} #<")),
        chd(tail=CACHE.replace("ALLOC", "{first_way: 9, ways: 2}")),
    ),
    Case(
        "NFV131",
        "cache_allocation.domains[0].allocations[1]",
        chd(
            tail=CACHE.replace(
                "ALLOC", "{first_way: 0, ways: 4}\n        - {first_way: 3, ways: 2} #<"
            )
        ),
        chd(
            tail=CACHE.replace(
                "ALLOC", "{first_way: 0, ways: 4}\n        - {first_way: 4, ways: 2}"
            )
        ),
    ),
    Case(
        "NFV132",
        "cache_allocation.domains[0].numa_nodes",
        chd(tail=CACHE.replace("[0]", "[0, 3] #<").replace("ALLOC", "{first_way: 0, ways: 1}")),
        chd(tail=CACHE.replace("ALLOC", "{first_way: 0, ways: 1}")),
    ),
    Case(
        "NFV133",
        "cache_allocation.classes",
        chd(
            tail=CACHE.replace("classes: 4", "classes: 2 #<").replace(
                "ALLOC",
                "{first_way: 0, ways: 1, owner: a}\n        - {first_way: 1, ways: 1, owner: b}",
            )
        ),
        chd(
            tail=CACHE.replace(
                "ALLOC",
                "{first_way: 0, ways: 1, owner: a}\n        - {first_way: 1, ways: 1, owner: b}",
            )
        ),
    ),
    Case(
        "NFV050",
        "memory.total_mib",
        chd(head="memory:\n  total_mib: 65536 #<\n"),
        chd(head="memory:\n  type: DDR4\n"),
    ),
    Case(
        "NFV413",
        "numa_nodes[1].cpus[0].core",
        TWO_NODES.replace("CORE", "0"),
        TWO_NODES.replace("CORE", "1").replace(" #<", ""),
    ),
    Case(
        "NFV401",
        "numa_nodes[0].cpus[3].id",
        chd(
            cpus=GOOD_CPUS.replace(
                "{id: 3, core: 1, siblings: [1, 3]}", "{id: 2, core: 1, siblings: [1, 2]} #<"
            )
        ),
        chd(),
    ),
    Case(
        "NFV402",
        "numa_nodes[0].cpus[0].siblings",
        chd(
            cpus="      - {id: 0, core: 0, siblings: [1]} #<\n      - {id: 1, core: 0, siblings: [0, 1]}\n"
        ),
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0, 1]}\n      - {id: 1, core: 0, siblings: [0, 1]}\n"
        ),
    ),
    Case(
        "NFV403",
        "numa_nodes[0].cpus[0].siblings",
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0, 1]} #<\n      - {id: 1, core: 0, siblings: [1]}\n"
        ),
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0, 1]}\n      - {id: 1, core: 0, siblings: [0, 1]}\n"
        ),
    ),
    Case(
        "NFV404",
        "numa_nodes[0].cpus[0].siblings",
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0, 1]} #<\n      - {id: 1, core: 1, siblings: [0, 1]}\n"
        ),
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0, 1]}\n      - {id: 1, core: 0, siblings: [0, 1]}\n"
        ),
    ),
    Case(
        "NFV404",
        "numa_nodes[0].cpus[0].siblings",
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0]} #<\n      - {id: 1, core: 0, siblings: [1]}\n"
        ),
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0]}\n      - {id: 1, core: 1, siblings: [1]}\n"
        ),
    ),
    Case(
        "NFV405",
        "numa_nodes[0].cpus[0].siblings",
        chd(cpus="      - {id: 0, core: 0, siblings: [0, 40]} #<\n"),
        chd(cpus="      - {id: 0, core: 0, siblings: [0]}\n"),
    ),
    Case(
        "NFV406",
        "numa_nodes[0].cpus[0].state",
        chd(cpus="      - {id: 0, core: 0, siblings: [0], state: dedicated} #<\n"),
        chd(cpus="      - {id: 0, core: 0, siblings: [0], state: dedicated, owner: vm-1}\n"),
    ),
    Case(
        "NFV407",
        "numa_nodes[0].cpus[0].oversubscription_ratio",
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0], state: shared, oversubscription_ratio: 0.5} #<\n"
        ),
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0], state: shared, oversubscription_ratio: 4}\n"
        ),
    ),
    Case(
        "NFV407",
        "numa_nodes[0].cpus[0].oversubscription_ratio",
        chd(cpus="      - {id: 0, core: 0, siblings: [0], state: shared} #<\n"),
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0], state: shared, oversubscription_ratio: 1}\n"
        ),
    ),
    Case(
        "NFV408",
        "numa_nodes[0].cpus[0].usage_ratio",
        chd(
            cpus="      - id: 0\n        core: 0\n        siblings: [0]\n        state: shared\n"
            "        oversubscription_ratio: 4\n        usage_ratio: 1.5 #<\n"
        ),
        chd(
            cpus="      - id: 0\n        core: 0\n        siblings: [0]\n        state: shared\n"
            "        oversubscription_ratio: 4\n        usage_ratio: 0.5\n"
        ),
    ),
    Case(
        "NFV409",
        "numa_nodes[0].cpus[0]",
        chd(cpus="      - {id: 0, core: 0, siblings: [0], owner: vm-1} #<\n"),
        chd(cpus="      - {id: 0, core: 0, siblings: [0]}\n"),
    ),
    Case(
        "NFV410",
        "numa_nodes[0].cpus[0].state",
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0], eligible: false, state: dedicated, owner: x} #<\n"
        ),
        chd(cpus="      - {id: 0, core: 0, siblings: [0], eligible: false}\n"),
    ),
    Case(
        "NFV411",
        "numa_distances",
        chd(head="numa_distances: [[10, 21], [21, 10]] #<\n"),
        chd(head="numa_distances: [[10]]\n"),
    ),
    Case(
        "NFV412",
        "interconnect[0].nodes[1]",
        chd(tail="interconnect:\n  - {nodes: [0, 1], bandwidth_gbps: 100} #<\n"),
        chd(tail="interconnect:\n  - {nodes: [0, 0], bandwidth_gbps: 100}\n"),
    ),
    Case(
        "NFV414",
        "interconnect[0].bandwidth_used_gbps",
        chd(
            tail="interconnect:\n  - {nodes: [0, 0], bandwidth_gbps: 100, bandwidth_used_gbps: 120} #<\n"
        ),
        chd(
            tail="interconnect:\n  - {nodes: [0, 0], bandwidth_gbps: 100, bandwidth_used_gbps: 20}\n"
        ),
    ),
    Case(
        "NFV415",
        "numa_nodes[0].cpus[0].owner",
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0], state: shared, oversubscription_ratio: 2, owner: a} #<\n"
        ),
        chd(
            cpus="      - {id: 0, core: 0, siblings: [0], state: shared, oversubscription_ratio: 2}\n"
        ),
    ),
    Case(
        "NFV416",
        "hypervisor.vswitch.pmd_cpus[1]",
        chd(
            head="hypervisor:\n  type: kvm\n  vswitch:\n    type: ovs_dpdk\n    pmd_cpus:\n      - 0\n      - 9 #<\n",
            cpus=GOOD_CPUS.replace("siblings: [0, 2]}", "siblings: [0, 2], eligible: false}"),
        ),
        chd(
            head="hypervisor: {type: kvm, vswitch: {type: ovs_dpdk, pmd_cpus: [0, 2]}}\n",
            cpus=GOOD_CPUS.replace("siblings: [0, 2]}", "siblings: [0, 2], eligible: false}"),
        ),
    ),
    Case(
        "NFV417",
        "hypervisor.vswitch.pmd_cpus[0]",
        chd(
            head="hypervisor:\n  type: kvm\n  vswitch:\n    type: ovs_dpdk\n    pmd_cpus:\n      - 1 #<\n"
        ),
        chd(
            head="hypervisor: {type: kvm, vswitch: {type: ovs_dpdk, pmd_cpus: [1, 3]}}\n",
            cpus=GOOD_CPUS.replace("siblings: [1, 3]}", "siblings: [1, 3], eligible: false}"),
        ),
    ),
    Case(
        "NFV210",
        "numa_nodes[0].memory.hugepages[0].used",
        chd(
            memory="    memory:\n      total_mib: 8192\n      hugepages:\n"
            "        - size_kib: 1048576\n          total: 4\n          used: 5 #<\n"
        ),
        chd(),
    ),
    Case(
        "NFV211",
        "numa_nodes[0].memory.hugepages",
        chd(
            memory="    memory:\n      total_mib: 2048\n"
            "      hugepages: [{size_kib: 1048576, total: 4}] #<\n"
        ),
        chd(),
    ),
    Case(
        "NFV212",
        "numa_nodes[0].memory.normal.used_mib",
        chd(
            memory="    memory:\n      total_mib: 8192\n      normal:\n        reserved_mib: 4096\n"
            "        used_mib: 6000 #<\n"
        ),
        chd(
            memory="    memory:\n      total_mib: 8192\n      normal: {reserved_mib: 4096, used_mib: 4000}\n"
        ),
    ),
    Case(
        "NFV213",
        "numa_nodes[0].memory.hugepages[1]",
        chd(
            memory="    memory:\n      total_mib: 8192\n      hugepages:\n"
            "        - {size_kib: 2048, total: 10}\n        - {size_kib: 2048, total: 5} #<\n"
        ),
        chd(
            memory="    memory:\n      total_mib: 8192\n      hugepages:\n        - {size_kib: 2048, total: 15}\n"
        ),
    ),
    Case(
        "NFV214",
        "numa_nodes[0].memory.normal.oversubscription_ratio",
        chd(
            memory="    memory:\n      total_mib: 8192\n      normal:\n        oversubscription_ratio: 0.5 #<\n"
        ),
        chd(
            memory="    memory:\n      total_mib: 8192\n      normal:\n        oversubscription_ratio: 1.5\n"
        ),
    ),
    Case(
        "NFV215",
        "numa_nodes[0].memory.bandwidth_used_gbps",
        chd(
            memory="    memory:\n      total_mib: 8192\n      bandwidth_gbps: 100\n"
            "      bandwidth_used_gbps: 101 #<\n"
        ),
        chd(
            memory="    memory:\n      total_mib: 8192\n      bandwidth_gbps: 100\n      bandwidth_used_gbps: 99\n"
        ),
    ),
    Case(
        "NFV203",
        "numa_nodes[0].memory.hugepages[0].size_kib",
        chd(
            memory="    memory:\n      total_mib: 8192\n      hugepages:\n        - {size_kib: 4096, total: 1} #<\n"
        ),
        chd(),
    ),
    Case(
        "NFV310",
        "numa_nodes[0].nics[0].ports[0].bandwidth_used_gbps",
        chd(
            nics=GOOD_NICS.replace(
                "            speed_gbps: 25\n",
                "            speed_gbps: 25\n            bandwidth_used_gbps: 30 #<\n",
            )
        ),
        chd(),
    ),
    Case(
        "NFV311",
        "numa_nodes[0].nics[0].ports[0].vfs",
        chd(
            nics=GOOD_NICS.replace(
                "            vfs:\n", "            sriov_total_vfs: 1\n            vfs: #<\n"
            )
        ),
        chd(
            nics=GOOD_NICS.replace(
                "            vfs:\n", "            sriov_total_vfs: 2\n            vfs:\n"
            )
        ),
    ),
    Case(
        "NFV312",
        "numa_nodes[0].nics[0].ports[0].usage",
        chd(
            nics=GOOD_NICS.replace(
                "            usage: sriov\n", "            usage: dedicated #<\n"
            ).replace("in_use: true, owner: vm-1", "in_use: false")
        ),
        chd(
            nics=GOOD_NICS.replace(
                "            usage: sriov\n",
                "            usage: dedicated\n            owner: vm-2\n",
            ).replace("in_use: true, owner: vm-1", "in_use: false")
        ),
    ),
    Case(
        "NFV313",
        "numa_nodes[0].nics[0].ports[0].vfs[0].in_use",
        chd(
            nics=GOOD_NICS.replace("usage: sriov", "usage: vswitch").replace(
                "owner: vm-1}", "owner: vm-1} #<"
            )
        ),
        chd(),
    ),
    Case(
        "NFV314",
        "numa_nodes[0].nics[0].ports[0].vfs[1].rate_gbps",
        chd(
            nics=GOOD_NICS.replace(
                '{pci_address: "0000:18:01.1"}', '{pci_address: "0000:18:01.1", rate_gbps: 40} #<'
            )
        ),
        chd(
            nics=GOOD_NICS.replace(
                '{pci_address: "0000:18:01.1"}', '{pci_address: "0000:18:01.1", rate_gbps: 5}'
            )
        ),
    ),
    Case(
        "NFV315",
        "numa_nodes[0].nics[0].ports[0].vfs[0].in_use",
        chd(nics=GOOD_NICS.replace("in_use: true, owner: vm-1}", "in_use: true} #<")),
        chd(),
    ),
    Case(
        "NFV316",
        "hypervisor.vswitch.bandwidth_used_gbps",
        chd(
            head="hypervisor:\n  type: kvm\n  vswitch:\n    type: ovs_dpdk\n    bandwidth_gbps: 20\n"
            "    bandwidth_used_gbps: 25 #<\n"
        ),
        chd(
            head="hypervisor: {type: kvm, vswitch: {type: ovs_dpdk, bandwidth_gbps: 20, bandwidth_used_gbps: 5}}\n"
        ),
    ),
    Case(
        "NFV501",
        "numa_nodes[0].nics[0].ports[0].vfs[1].pci_address",
        chd(nics=GOOD_NICS.replace('{pci_address: "0000:18:01.1"}', '{pci_address: "18:01.1"} #<')),
        chd(),
    ),
    Case(
        "NFV502",
        "numa_nodes[0].nics[0].ports[0].vfs[1].pci_address",
        chd(
            nics=GOOD_NICS.replace(
                '{pci_address: "0000:18:01.1"}', '{pci_address: "0000:18:01.0"} #<'
            )
        ),
        chd(),
    ),
    Case(
        "NFV502",
        "numa_nodes[0].pci_devices[0].pci_address",
        chd(tail='    pci_devices:\n      - {pci_address: "0000:18:00.0", class: crypto} #<\n'),
        chd(tail='    pci_devices:\n      - {pci_address: "0000:3d:00.0", class: crypto}\n'),
    ),
    Case(
        "NFV601",
        "hypervisor.capabilities[1]",
        chd(
            head="hypervisor:\n  type: kvm\n  capabilities:\n    - cpu_pinning\n    - hugepage_pinning #<\n"
        ),
        chd(
            head="hypervisor:\n  type: kvm\n  capabilities:\n    - cpu_pinning\n    - hugepage_numa_pinning\n"
        ),
    ),
    Case(
        "NFV601",
        "processor.features[0]",
        chd().replace(
            "processor: {vendor: GenuineIntel, model: Xeon}\n",
            "processor:\n  vendor: GenuineIntel\n  model: Xeon\n  features: [vtd] #<\n",
        ),
        chd().replace(
            "processor: {vendor: GenuineIntel, model: Xeon}\n",
            "processor:\n  vendor: GenuineIntel\n  model: Xeon\n  features: [iommu]\n",
        ),
    ),
    Case(
        "NFV602",
        "hypervisor.disabled_capabilities[0]",
        chd(
            head="hypervisor:\n  type: kvm\n  capabilities: [iommu]\n  disabled_capabilities:\n    - iommu #<\n"
        ),
        chd(
            head="hypervisor:\n  type: kvm\n  capabilities: [iommu]\n  disabled_capabilities: [slat]\n"
        ),
    ),
    Case(
        "NFV603",
        "hypervisor.capabilities[0]",
        chd().replace(
            "processor: {vendor: GenuineIntel, model: Xeon}\n",
            "processor: {vendor: GenuineIntel, model: Xeon, disabled_features: [iommu]}\n"
            "hypervisor:\n  type: kvm\n  capabilities:\n    - iommu #<\n",
        ),
        chd().replace(
            "processor: {vendor: GenuineIntel, model: Xeon}\n",
            "processor: {vendor: GenuineIntel, model: Xeon, features: [iommu]}\n"
            "hypervisor:\n  type: kvm\n  capabilities:\n    - iommu\n",
        ),
    ),
    Case(
        "NFV607",
        "processor.flags[1]",
        chd().replace(
            "processor: {vendor: GenuineIntel, model: Xeon}\n",
            "processor:\n  vendor: GenuineIntel\n  model: Xeon\n  flags:\n    - vmx\n    - vmx #<\n",
        ),
        chd().replace(
            "processor: {vendor: GenuineIntel, model: Xeon}\n",
            "processor:\n  vendor: GenuineIntel\n  model: Xeon\n  flags: [vmx, ept]\n",
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    check(case)
