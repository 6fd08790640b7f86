"""`nfvplace convert --to nova` against Nova 34's own code (bench/nova_flavor_check.py, run in the
Nova virtualenv): every bundled VM and every vendor file of the dialect corpus is written as
flavors that Nova's API accepts at microversion 2.86 (the request schema, the integer checks of
`flavors.create`, every extra spec through Nova's extra-spec validators), whose required traits
the libvirt driver reports, and whose guest topology Nova builds as the VM asked
(`numa_get_constraints`, `get_realtime_cpu_constraint`); nfvplace's reader reads each flavor back
as Nova reads it. The CPU flag and trait names are checked against Nova's and libvirt's."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from nfvplace.conversion import convert
from nfvplace.dialects.base import DialectError
from nfvplace.dialects.nova_numa import nova_page_size
from nfvplace.dialects.nova_traits import CPU_TRAITS, nova_cpu_mask
from nfvplace.dialects.vm_parts import page_of
from nfvplace.integrations.nova.cpu_flags import LIBVIRT_TO_KERNEL, kernel_flags, libvirt_feature
from nfvplace.models import VmDescriptor
from nfvplace.models.vmd import CpuSet, Hugepages, ThreadPolicy
from tests.dialects.test_real_files import DATA, EXPECTED

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "bench" / "nova_flavor_check.py"
CPU_MAP = Path("/usr/share/libvirt/cpu_map/x86_features.xml")
BUNDLED = [*sorted((ROOT / "examples" / "vms").glob("*.yaml")), ROOT / "examples/vnf/ran-site.yaml"]
VENDOR = [DATA / name for name, (_, kind) in sorted(EXPECTED.items()) if kind in ("vmd", "vnf")]
MASKS = [(6, "^0,1"), (6, "^0-1"), (8, "^0-1,^4"), (8, "^0-1,4"), (4, "1-3"), (6, "0-5,^2")]
PAGE_SIZES = ["small", "large", "any", "2048", "4096", "4", "2MB", "2MiB", "1GB", "1GiB", "2048KB"]
PAGE_SIZES += ["2M", "1gb", "Large", "1Gb", "2Mbit", "huge"]
PINNED = {"hw:cpu_policy": "dedicated"}
BROKEN = [
    {"name": "float-disk", "vcpus": 2, "ram": 1024, "disk": 20.0, "extra_specs": {}},
    {
        "name": "no-trait",
        "vcpus": 2,
        "ram": 1024,
        "disk": 0,
        "extra_specs": {"trait:HW_CPU_X86_LM": "required"},
    },
    {
        "name": "unreported",
        "vcpus": 6,
        "ram": 1024,
        "disk": 0,
        "extra_specs": {
            **PINNED,
            "trait:HW_CPU_X86_PDPE1GB": "required",
            "hw:cpu_realtime": "yes",
            "hw:cpu_realtime_mask": "^0,1",
        },
    },
]
NOVA_WORDS = {-1: None, -2: "large", -3: "any"}  # nova.virt.hardware.MEMPAGES_*


def _synthetic(name: str, cpu_sets: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    vm = {"schema": "nfvplace/vmd/v1", "name": name, "cpu_thread_policy": "prefer"}
    return {**vm, "cpu_sets": cpu_sets, **fields}


# what the bundled and vendor files do not show: all vCPUs realtime, a mask with a gap, memory that is not whole pages
SYNTHETIC = [
    _synthetic("rt-all", [{"id": 0, "vcpus": [0, 1], "memory_mib": 2048}], realtime_vcpus=[0, 1]),
    _synthetic(
        "rt-gap", [{"id": 0, "vcpus": list(range(8)), "memory_mib": 4096}], realtime_vcpus=[2, 3, 5]
    ),
    _synthetic(
        "part-pages",
        [{"id": 0, "vcpus": [0, 1], "memory_mib": 1536, "hugepages": {"size": "1GiB", "count": 1}}],
    ),
]


def as_placed(vm: VmDescriptor) -> VmDescriptor:
    """The VM as nfvplace places it: a VM without cpu-sets that may not share PUs is pinned on
    one node (`placement/request.py`), with Nova's `prefer` unless it says otherwise."""
    if vm.cpu_sets or vm.cpu_oversubscription:
        return vm
    cpu_set = CpuSet(id=0, vcpus=tuple(range(vm.total_vcpus)), memory_mib=vm.total_memory_mib)
    explicit = "cpu_thread_policy" in vm.model_fields_set
    policy = vm.cpu_thread_policy if explicit else ThreadPolicy.prefer
    update = {"cpu_sets": (cpu_set,), "cpu_thread_policy": policy, "vcpus": None}
    return vm.model_copy(update={**update, "memory_mib": None})


def _cases() -> list[tuple[str, VmDescriptor, dict[str, Any]]]:
    """(label, asked VM as placed, written flavor) for every VM of every input."""
    inputs: list[tuple[str, Any]] = [
        (str(p.relative_to(ROOT)), str(p)) for p in [*BUNDLED, *VENDOR]
    ]
    inputs += [(f"synthetic:{vm['name']}", vm) for vm in SYNTHETIC]
    cases = []
    for label, source in inputs:
        asked = convert(source, to="nfvplace").data
        written = convert(source, to="nova").data
        members = [m["descriptor"] for m in asked["members"]] if "members" in asked else [asked]
        flavors = written["flavors"] if "flavors" in written else [written["flavor"]]
        for vm, flavor in zip(members, flavors, strict=True):
            placed = as_placed(VmDescriptor.model_validate(vm))
            cases.append((f"{label}:{flavor['name']}", placed, flavor))
    return cases


@pytest.fixture(scope="module")
def nova(nova_python: str) -> dict[str, Any]:
    cases = _cases()
    request = {
        "flavors": [flavor for _, _, flavor in cases] + BROKEN,
        "masks": MASKS,
        "page_sizes": PAGE_SIZES,
    }
    done = subprocess.run(
        [nova_python, str(CHECK)], input=json.dumps(request), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout)
    answer["cases"] = cases
    return answer


def test_the_check_refuses_what_nova_refuses(nova: dict[str, Any]) -> None:
    """What the writer used to write (issue 36): the check can fail."""
    disk, trait, unreported = nova["flavors"][-len(BROKEN) :]
    assert disk["api"] == ["POST /flavors: Invalid input received: disk must be an integer"]
    assert "trait:HW_CPU_X86_LM" in trait["api"][0]
    assert unreported["unreported"] == ["HW_CPU_X86_PDPE1GB"]
    assert unreported["topology"]["realtime"] == [1, 2, 3, 4, 5]  # `^0,1`


def test_every_flavor_is_accepted_by_novas_api_and_asks_only_reported_traits(
    nova: dict[str, Any],
) -> None:
    assert len(nova["cases"]) >= 40  # every bundled VM, VNF member and vendor VM
    assert len(nova["flavors"]) == len(nova["cases"]) + len(BROKEN)
    refused = {
        label: (answer["api"], answer["unreported"], answer["topology"].get("refused"))
        for (label, _, _), answer in zip(nova["cases"], nova["flavors"], strict=False)
        if answer["api"] or answer["unreported"] or "refused" in answer["topology"]
    }
    assert not refused


def _cells_asked(vm: VmDescriptor) -> list[tuple[list[int], bool]]:
    return [(sorted(cs.vcpus), not cs.floating) for cs in vm.cpu_sets]


def _cells_built(topology: dict[str, Any]) -> list[tuple[list[int], bool]]:
    return [
        (sorted(c["cpuset"] + c["pcpuset"]), bool(c["pcpuset"])) for c in topology["cells"] or ()
    ]


def test_nova_builds_the_guest_the_vm_asks(nova: dict[str, Any]) -> None:
    """Guest NUMA nodes, pinned or floating vCPUs, memory (whole pages), page size, realtime
    vCPUs and the thread policy of each cpu-set, as Nova's own constraints read the flavor."""
    wrong = {}
    for (label, vm, flavor), answer in zip(nova["cases"], nova["flavors"], strict=False):
        built = answer["topology"]
        got: dict[str, Any] = {
            "cells": _cells_built(built),
            "realtime": built["realtime"],
            "memory": [c["memory"] for c in built["cells"] or ()],
        }
        want: dict[str, Any] = {
            "cells": _cells_asked(vm),
            "realtime": sorted(vm.realtime_vcpus),
            "memory": [
                int(flavor["extra_specs"].get(f"hw:numa_mem.{i}", flavor["ram"]))
                for i in range(len(vm.cpu_sets))
            ],
        }
        if any(m < cs.memory_mib for m, cs in zip(got["memory"], vm.cpu_sets, strict=False)):
            wrong[label] = f"less memory than asked: {got['memory']}"
        page = page_of(vm)
        if isinstance(page, int):
            got["page"] = {c["pagesize"] for c in built["cells"]}
            want["page"] = {page}
        policies = {
            (cs.thread_policy or vm.cpu_thread_policy).value
            for cs in vm.cpu_sets
            if not cs.floating and cs.single_vcpus
        }
        if len(policies) == 1:  # one asked (several: the strictest, with a finding)
            got["thread"] = {c["cpu_thread_policy"] for c in built["cells"] if c["pcpuset"]}
            want["thread"] = policies
        if got != want:
            wrong[label] = (got, want)
    assert not wrong


def test_the_reader_reads_each_flavor_as_nova_does(nova: dict[str, Any]) -> None:
    wrong = {}
    for (label, _, flavor), answer in zip(nova["cases"], nova["flavors"], strict=False):
        back = VmDescriptor.model_validate(convert({"flavor": flavor}, to="nfvplace").data)
        built = answer["topology"]
        got = (
            _cells_asked(back),
            sorted(back.realtime_vcpus),
            [cs.memory_mib for cs in back.cpu_sets],
        )
        want = (_cells_built(built), built["realtime"], [c["memory"] for c in built["cells"] or ()])
        got += ([_page(cs.hugepages) for cs in back.cpu_sets],)
        want += ([NOVA_WORDS.get(c["pagesize"], c["pagesize"]) for c in built["cells"] or ()],)
        if got != want:
            wrong[label] = (got, want)
    assert not wrong, json.dumps(wrong, indent=1)


def _page(pages: Hugepages | None) -> int | str | None:
    if pages is None:
        return None
    return pages.choice.value if pages.choice else pages.size_kib


def test_realtime_and_dedicated_masks_are_read_as_novas_parse_cpu_spec(
    nova: dict[str, Any],
) -> None:
    ours = [nova_cpu_mask(mask, vcpus, "hw:cpu_realtime_mask", ()) for vcpus, mask in MASKS]
    assert ours == nova["masks"]
    assert ours[0] == [1, 2, 3, 4, 5]  # `^0,1` adds vCPU 1 back: the trap the writer avoids


def test_page_sizes_are_read_as_nova_reads_them(nova: dict[str, Any]) -> None:
    for word, theirs in zip(PAGE_SIZES, nova["page_sizes"], strict=True):
        try:
            ours: Any = nova_page_size(word, ())
        except DialectError:
            ours = "refused"
        if isinstance(theirs, str):  # Nova refuses the spelling
            assert ours == "refused", word
        elif theirs in NOVA_WORDS:
            assert ours == NOVA_WORDS[theirs], word
        elif int(theirs) & (int(theirs) - 1):  # a size Nova takes that no MMU has: lint refuses
            assert ours == "refused", word
        else:
            assert ours == (None if theirs == 4 else int(theirs)), word


def test_cpu_flag_traits_are_those_novas_libvirt_driver_reports(nova: dict[str, Any]) -> None:
    reported = nova["traits"]  # libvirt feature name -> traits
    for flag, trait in CPU_TRAITS.items():
        assert trait in reported[libvirt_feature(flag)], flag
    # every feature Nova maps has a trait nfvplace writes, except `sse3` (libvirt says `pni`)
    for feature, traits in reported.items():
        if feature != "sse3":
            (flag,) = kernel_flags([feature])
            assert CPU_TRAITS[flag] in traits, feature


def test_the_nova_doors_flag_names_are_libvirts() -> None:
    """The libvirt names nfvplace maps are libvirt's (its cpu_map), and each of libvirt's own
    aliases for the kernel's spelling (`source='linux'`) maps to that spelling."""
    if not CPU_MAP.exists():
        pytest.skip(f"{CPU_MAP} is libvirt's (Debian: libvirt0, installed by scripts/setup.sh)")
    features = ET.parse(CPU_MAP).getroot().findall("feature")
    names = {f.get("name") for f in features}
    assert set(LIBVIRT_TO_KERNEL) <= names, set(LIBVIRT_TO_KERNEL) - names
    for feature in features:
        for alias in feature.findall("alias"):
            if alias.get("source") == "linux":
                assert alias.get("name") in kernel_flags([str(feature.get("name"))])
    assert kernel_flags(["sse4.2", "pclmuldq", "tsc-deadline", "sha-ni", "avx2"]) == [
        "avx2",
        "pclmulqdq",
        "sha_ni",
        "sse4_2",
        "tsc_deadline_timer",
    ]
    for flag in ("sse4_2", "avx512_vnni", "amx_bf16", "constant_tsc"):
        assert re.fullmatch(r"[a-z0-9.\-_]+", libvirt_feature(flag))
        assert flag in kernel_flags([libvirt_feature(flag)])
