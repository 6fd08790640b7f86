"""libvirt domain XML: schema-valid, and what it says equals the VM Configuration."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from nfvplace import errors
from nfvplace.errors import NfvplaceError
from nfvplace.models import VmConfiguration
from nfvplace.render import render_libvirt
from nfvplace.render._common import guest_layout
from nfvplace.render.libvirt import guest_cells

from ._support import (
    CASES,
    assert_domain_matches,
    libvirt_define,
    load_config,
    load_host,
    load_vm,
    parse_domain,
    virt_xml_validate,
)


def _config(**data: object) -> VmConfiguration:
    base: dict[str, object] = {"vm": "t", "host": "h"}
    base.update(data)
    return VmConfiguration.model_validate(base)


@pytest.mark.parametrize("with_descriptors", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_examples_validate_and_round_trip(
    case: str, with_descriptors: bool, tmp_path: Path
) -> None:
    config = load_config(case)
    vm, host = (load_vm(case), load_host()) if with_descriptors else (None, None)
    result = render_libvirt(config, vm, host)
    virt_xml_validate(result.text, tmp_path, f"{case}.xml")
    assert_domain_matches(parse_domain(result.text), config)
    # libvirt's own parser (test driver) accepts it and writes back the same pins and nodesets
    assert_domain_matches(parse_domain(libvirt_define(result.text, tmp_path)), config)


def test_figure8_pairs_become_guest_threads_and_partial_hugepages_split_cells() -> None:
    parsed = parse_domain(render_libvirt(load_config("figure8")).text)
    assert parsed["threads"] == 2
    # cpu-set 0: 4 GiB of its 10 GiB in 1 GiB pages -> a CPU cell of 4 GiB on pages and a
    # memory-only cell of 6 GiB of normal memory, both bound to host node 1
    assert parsed["cells"][0]["memory_kib"] == 4 * 1024 * 1024
    assert parsed["cells"][2] == {"cpus": set(), "memory_kib": 6 * 1024 * 1024, "mem_access": None}
    assert parsed["memnodes"][2] == ("strict", {1})
    assert parsed["pages"] == {1048576: {0, 1}}
    # emulator threads share the VM's own PUs (no emulator_pins, no realtime vCPUs)
    assert parsed["emulatorpin"] == {2, 3, 4, 22, 23, 24, 25, 42, 43, 44, 62, 63, 64, 65}


def test_vran_du_realtime_settings() -> None:
    result = render_libvirt(load_config("vran-du"), load_vm("vran-du"), load_host())
    parsed = parse_domain(result.text)
    assert parsed["vcpusched"] == dict.fromkeys(range(2, 8), ("fifo", "1"))
    assert parsed["locked"]
    assert parsed["nosharepages"]
    assert parsed["emulatorpin"] == {9}
    assert '<pmu state="off"/>' in result.text
    assert '<tag id="100"/>' in result.text  # VLAN of the VF, from the VMD
    assert result.warnings == ()


def test_realtime_without_emulator_pins_keeps_emulator_off_realtime_pus() -> None:
    config = load_config("vran-du").model_copy(update={"emulator_pins": ()})
    parsed = parse_domain(render_libvirt(config).text)
    assert parsed["emulatorpin"] == {5, 45}  # the PUs of vCPUs 0 and 1, the non-realtime ones


def test_all_realtime_without_emulator_pins_warns() -> None:
    config = load_config("vran-du").model_copy(
        update={"emulator_pins": (), "realtime_vcpus": tuple(range(8))}
    )
    result = render_libvirt(config)
    assert any("emulator" in w for w in result.warnings)


def test_vhost_user_shares_guest_memory() -> None:
    parsed = parse_domain(render_libvirt(load_config("vhost-user")).text)
    assert parsed["shared_access"]
    assert parsed["cells"][0]["mem_access"] == "shared"
    assert parsed["vhostuser"] == 2
    assert parsed["pages"] == {2048: {0}}


def test_vhost_user_without_hugepages_uses_memfd(tmp_path: Path) -> None:
    config = _config(
        vcpus=2,
        memory_mib=1024,
        shared={"vcpus": 2, "cpus": [4, 5]},
        interfaces=[{"name": "v0", "mode": "vswitch", "vhost_user": True}],
    )
    text = render_libvirt(config).text
    virt_xml_validate(text, tmp_path)
    assert '<source type="memfd"/>' in text
    assert '<access mode="shared"/>' in text


def test_minimal_cloud_vm_renders(tmp_path: Path) -> None:
    config = _config(vcpus=1, memory_mib=512)
    result = render_libvirt(config)
    virt_xml_validate(result.text, tmp_path)
    parsed = parse_domain(result.text)
    assert parsed["vcpus"] == 1
    assert parsed["memory_kib"] == 512 * 1024
    assert parsed["pins"] == {}
    assert parsed["cells"] == {}
    assert "<cputune" not in result.text
    assert "<numatune" not in result.text


def test_unpaired_vcpus_render_one_thread_per_core_with_a_warning() -> None:
    config = _config(
        cpu_sets=[
            {
                "id": 0,
                "numa_node": 0,
                "vcpu_pins": {0: 1, 1: 41, 2: 2},
                "memory_mib": 1024,
                "howtogroup": [[0, 1]],
            }
        ]
    )
    result = render_libvirt(config)
    assert parse_domain(result.text)["threads"] == 1
    assert any("no howtogroup pair" in w for w in result.warnings)


def test_pairs_from_the_vmd_when_the_configuration_has_none() -> None:
    config = load_config("figure8")
    bare = config.model_copy(
        update={
            "cpu_sets": tuple(cs.model_copy(update={"howtogroup": ()}) for cs in config.cpu_sets)
        }
    )
    assert parse_domain(render_libvirt(bare).text)["threads"] == 1
    assert parse_domain(render_libvirt(bare, load_vm("figure8")).text)["threads"] == 2


def test_shared_vcpus_with_memory_get_their_own_cell(tmp_path: Path) -> None:
    config = _config(
        cpu_sets=[{"id": 0, "numa_node": 1, "vcpu_pins": {0: 21, 1: 22}, "memory_mib": 2048}],
        shared={"vcpus": 2, "cpus": [30, 31], "numa_node": 0, "memory_mib": 1024},
    )
    result = render_libvirt(config)
    virt_xml_validate(result.text, tmp_path)
    parsed = parse_domain(result.text)
    assert parsed["cells"][1]["cpus"] == {2, 3}
    assert parsed["memnodes"][1] == ("strict", {0})
    assert_domain_matches(parsed, config)


def test_cells_are_in_cpu_set_id_order() -> None:
    config = _config(
        cpu_sets=[
            {"id": 1, "numa_node": 0, "vcpu_pins": {1: 2}, "memory_mib": 1024},
            {"id": 0, "numa_node": 1, "vcpu_pins": {0: 21}, "memory_mib": 2048},
        ]
    )
    cells = guest_cells(config, guest_layout(config))
    assert [(c.vcpus, c.host_node) for c in cells] == [((0,), 1), ((1,), 0)]


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (
            {
                "cpu_sets": [
                    {"id": 0, "numa_node": 0, "vcpu_pins": {0: 1}, "memory_mib": 1024},
                    {"id": 1, "numa_node": 1, "vcpu_pins": {0: 21}, "memory_mib": 1024},
                ]
            },
            "vCPU 0 is pinned twice",
        ),
        (
            {"cpu_sets": [{"id": 0, "numa_node": 0, "vcpu_pins": {3: 1}, "memory_mib": 1024}]},
            "outside 0..0",
        ),
        (
            {"vcpus": 2, "memory_mib": 512, "realtime_vcpus": [5]},
            "realtime vCPUs [5] do not exist",
        ),
        (
            {
                "cpu_sets": [
                    {
                        "id": 0,
                        "numa_node": 0,
                        "vcpu_pins": {0: 1},
                        "memory_mib": 1024,
                        "hugepages": {"size_kib": 1048576, "count": 2},
                    }
                ]
            },
            "more than the cpu-set's 1024 MiB",
        ),
        (
            {"vcpus": 1, "memory_mib": 512, "interfaces": [{"name": "e", "mode": "sriov"}]},
            "has no pci_address",
        ),
        ({"memory_mib": 512}, "no vCPUs"),
    ],
)
def test_inconsistent_configurations_are_refused_with_reasons(
    data: dict[str, object], needle: str
) -> None:
    with pytest.raises(NfvplaceError) as info:
        render_libvirt(_config(**data))
    assert info.value.code == errors.RENDER_INVALID
    assert needle in str(info.value)


def test_wrong_descriptors_are_refused() -> None:
    config = load_config("figure8")
    with pytest.raises(NfvplaceError) as info:
        render_libvirt(config, load_vm("vran-du"))
    assert info.value.code == errors.RENDER_MISMATCH
    other = load_host().model_copy(update={"id": "compute-99"})
    with pytest.raises(NfvplaceError) as info:
        render_libvirt(config, None, other)
    assert info.value.code == errors.RENDER_MISMATCH


@pytest.mark.parametrize("case", sorted(CASES))
def test_renderer_is_pure(case: str) -> None:
    config, vm, host = load_config(case), load_vm(case), load_host()
    before = [copy.deepcopy(m.model_dump()) if m is not None else None for m in (config, vm, host)]
    first = render_libvirt(config, vm, host)
    after = [m.model_dump() if m is not None else None for m in (config, vm, host)]
    assert before == after
    assert render_libvirt(config, vm, host) == first  # same inputs, same output
