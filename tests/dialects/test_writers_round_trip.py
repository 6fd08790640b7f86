"""nfvplace -> dialect -> nfvplace keeps what bears on placement, or the writer says what it drops.

Hypothesis draws VM Descriptors (cpu-sets with paired and single vCPUs, thread policies, hugepages
of one or several sizes covering all or part of the memory, page sizes chosen on the node
(`large`, `any`), interfaces, emulator threads, realtime vCPUs, required flags and capabilities,
plain shared VMs, floating cpu-sets); each is written in every dialect and
read back. Every difference in what placement looks at (per cpu-set: vCPU count, pairs, the
policy of the single vCPUs, memory, hugepages, interfaces; and the VM's totals, flags,
capabilities, devices) must be covered by a note of the writer at that field or above it.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nfvplace.conversion import convert
from nfvplace.dialects.writers import TARGETS
from nfvplace.models.vmd import VmDescriptor

CAPS = ("cpu_pinning", "numa_memory_pinning", "hugepage_numa_pinning", "iommu")
POLICIES = ("isolate", "prefer", "require")
Key = tuple[str | int, ...]


@st.composite
def cpu_set(
    draw: st.DrawFn, index: int, first: int, page: int | str | None, floating: bool = False
) -> dict[str, Any]:
    count = draw(st.integers(1, 6))
    vcpus = list(range(first, first + count))
    pairs = draw(st.sampled_from(("none", "all", "some")))
    groups = [vcpus[i : i + 2] for i in range(0, count - 1, 2)]
    if pairs == "some":
        groups = groups[:1]
    memory = draw(st.integers(1, 8)) * 1024
    out: dict[str, Any] = {"id": index, "vcpus": vcpus, "memory_mib": memory}
    if floating:
        out["floating"] = True
    elif pairs != "none" and groups:
        out["howtogroup"] = groups
    if isinstance(page, str):
        out["hugepages"] = {"size": page}
    elif page:
        part = draw(st.sampled_from((1, 1, 1, 2)))  # now and then pages for half the memory
        out["hugepages"] = {"size": f"{page}KiB", "count": memory * 1024 // page // part}
    if draw(st.booleans()) and draw(st.booleans()):
        interface = {"name": f"if{index}", "mode": draw(st.sampled_from(("sriov", "dedicated")))}
        if draw(st.integers(0, 3)) == 0:
            interface["numa_affinity"] = draw(st.sampled_from(("required", "preferred", "socket")))
        out["interfaces"] = [interface]
    if draw(st.integers(0, 9)) == 0 and not floating:
        out["thread_policy"] = draw(st.sampled_from(POLICIES))
    return out


@st.composite
def vms(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.integers(0, 4)) == 0:
        return {
            "schema": "nfvplace/vmd/v1",
            "name": "plain",
            "vcpus": draw(st.integers(1, 16)),
            "memory_mib": draw(st.integers(1, 16)) * 1024,
            "cpu_oversubscription": True,
        }
    sets = []
    first = 0
    page_sizes = draw(
        st.sampled_from(
            ((None,), (1048576,), (2048,), (1048576, 2048), ("large",), ("any",), ("large", 2048))
        )
    )
    floating = draw(st.integers(0, 4)) == 0
    for index in range(draw(st.integers(1, 3))):
        page = page_sizes[index % len(page_sizes)]
        sets.append(draw(cpu_set(index, first, page, floating)))
        first += len(sets[-1]["vcpus"])
    caps = ["cpu_pinning"] + (
        ["numa_memory_pinning", "hugepage_numa_pinning"] if page_sizes != (None,) else []
    )
    if draw(st.integers(0, 5)) == 0:
        caps.append("iommu")
    vm: dict[str, Any] = {
        "schema": "nfvplace/vmd/v1",
        "name": "vm",
        "hypervisor": {"type": "kvm", "required_capabilities": caps},
        "cpu_thread_policy": draw(st.sampled_from(POLICIES)),
        "cpu_sets": sets,
    }
    if floating:
        vm["cpu_oversubscription"] = True
        caps.remove("cpu_pinning")
        if "numa_memory_pinning" not in caps:
            caps.insert(0, "numa_memory_pinning")
        return vm
    if draw(st.integers(0, 5)) == 0:
        vm["emulator_threads"] = "isolate"
    if draw(st.integers(0, 5)) == 0:
        vm["realtime_vcpus"] = [first - 1]
    if draw(st.integers(0, 5)) == 0:
        vm["processor"] = {"required_flags": ["aes"]}
    return vm


def placement_form(vm: VmDescriptor) -> dict[Key, Any]:
    """What placement looks at, by the VM field it comes from."""
    form: dict[Key, Any] = {
        ("vcpus",): vm.total_vcpus,
        ("memory_mib",): vm.total_memory_mib,
        ("cpu_oversubscription",): vm.cpu_oversubscription and not vm.cpu_sets,
        ("emulator_threads",): vm.emulator_threads.value,
        ("realtime_vcpus",): len(vm.realtime_vcpus),
        ("processor",): sorted(vm.processor.required_flags) if vm.processor else [],
        ("hypervisor",): sorted(vm.hypervisor.all_required_capabilities) if vm.hypervisor else [],
        ("pci_devices",): [d.model_dump() for d in vm.pci_devices],
        ("interfaces",): sorted(i.mode.value for i in vm.interfaces),
    }
    for k, cs in enumerate(vm.cpu_sets):
        policy = (cs.thread_policy or vm.cpu_thread_policy).value
        pairs, singles = len(cs.howtogroup), len(cs.single_vcpus)
        if policy == "require":  # pairs the single vCPUs in order; an odd one out is isolated
            pairs, singles, policy = pairs + singles // 2, singles % 2, "isolate"
        if cs.floating:  # nothing pinned: no pairs, no thread policy
            pairs, singles = 0, 0
        form[("cpu_sets", k, "vcpus")] = len(cs.vcpus)
        form[("cpu_sets", k, "howtogroup")] = pairs
        form[("cpu_sets", k, "thread_policy")] = policy if singles else None
        form[("cpu_sets", k, "memory_mib")] = cs.memory_mib
        form[("cpu_sets", k, "floating")] = cs.floating
        pages = cs.hugepages
        form[("cpu_sets", k, "hugepages")] = (pages.size, pages.count) if pages else None
        form[("cpu_sets", k, "interfaces")] = sorted(
            (i.mode.value, str(i.numa_affinity)) for i in cs.interfaces
        )
    return form


def _covered(key: Key, notes: set[Key]) -> bool:
    """A note at the field, above or below it, or on a field it derives from (the policy of a cpu-set's
    single vCPUs and the pairs `require` makes derive from its pairs and both policies)."""
    prefixes = {key[:n] for n in range(1, len(key) + 1)}
    if key[-1] in ("thread_policy", "howtogroup"):
        prefixes |= {
            ("cpu_thread_policy",),
            (*key[:-1], "howtogroup"),
            (*key[:-1], "thread_policy"),
        }
    if key[-1] == "interfaces":  # an interface the dialect cannot tie moves to another cpu-set
        prefixes |= {n for n in notes if n[-1:] == ("interfaces",)}
    return bool(prefixes & notes) or any(n[: len(key)] == key for n in notes)  # or below it


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vm=vms(), target=st.sampled_from(TARGETS))
def test_every_writer_keeps_what_bears_on_placement_or_says_so(
    vm: dict[str, Any], target: str
) -> None:
    original = VmDescriptor.model_validate(vm)
    written = convert(vm, to=target)
    back = VmDescriptor.model_validate(convert(written.data).data)
    notes = {
        tuple(int(p) if p.isdigit() else p for p in f.path.strip("/").split("/"))
        for f in written.findings
    }
    before, after = placement_form(original), placement_form(back)
    lost = [k for k in before if before[k] != after.get(k) and not _covered(k, notes)]
    assert not lost, (target, vm, {k: (before[k], after.get(k)) for k in lost}, sorted(notes))


def test_paired_threads_become_require_and_read_back_as_pairs() -> None:
    """OpenVIM `paired-threads: 5` -> Nova `require`: read back, 5 cores, not 10."""
    vm = {
        "schema": "nfvplace/vmd/v1",
        "name": "vr",
        "cpu_thread_policy": "isolate",
        "cpu_sets": [
            {
                "id": 0,
                "vcpus": list(range(10)),
                "howtogroup": [[2 * i, 2 * i + 1] for i in range(5)],
                "memory_mib": 4096,
            }
        ],
    }
    written = convert(vm, to="nova")
    assert written.data["flavor"]["extra_specs"]["hw:cpu_thread_policy"] == "require"
    back = VmDescriptor.model_validate(convert(written.data).data)
    assert len(back.cpu_sets[0].howtogroup) == 5
    assert not back.cpu_sets[0].single_vcpus
