"""Host tuning: kernel command line (seed 003) and IRQ affinity plan (seed 001)."""

from __future__ import annotations

import pytest

from nfvplace import errors
from nfvplace.errors import NfvplaceError
from nfvplace.models import ComputeHostDescriptor, VmConfiguration
from nfvplace.models.chd import CpuState
from nfvplace.render import compute_host_tuning, render_host_tuning
from nfvplace.render._common import parse_cpu_list

from ._support import CASES, load_config, load_host


def _args(cmdline: tuple[str, ...]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for arg in cmdline:
        key, _, value = arg.partition("=")
        out.setdefault(key, []).append(value)
    return out


def _all_configs() -> list[VmConfiguration]:
    return [load_config(case) for case in sorted(CASES)]


def test_isolated_and_housekeeping_pus() -> None:
    host = load_host()
    tuning = compute_host_tuning(_all_configs(), host)
    reserved = {cpu.id for cpu in host.cpus if not cpu.eligible}
    assert set(tuning.housekeeping) == reserved == {0, 20, 40, 60}
    isolated = set(tuning.isolated)
    assert not isolated & reserved
    # every PU that runs a pinned vCPU or an emulator thread is isolated ...
    for config in _all_configs():
        assert set(config.held_cpus) <= isolated
    # ... and the shared PUs of the cloud VM are not (isolcpus stops load balancing)
    assert not {36, 37, 38, 39} & isolated
    args = _args(tuning.cmdline)
    for key in ("isolcpus", "nohz_full", "rcu_nocbs"):
        assert set(parse_cpu_list(args[key][0])) == isolated
    assert set(parse_cpu_list(args["irqaffinity"][0])) == reserved
    assert set(parse_cpu_list(args["kthread_cpus"][0])) == reserved
    assert args["intel_iommu"] == ["on"]
    assert args["iommu"] == ["pt"]


def test_hugepages_per_size_default_is_the_largest() -> None:
    args = _args(compute_host_tuning(_all_configs(), load_host()).cmdline)
    assert args["default_hugepagesz"] == ["1G"]
    assert args["hugepagesz"] == ["1G", "2M"]
    assert args["hugepages"] == ["48", "4096"]  # the host's pools, the same on both nodes


def test_uneven_nodes_use_the_node_specific_form() -> None:
    host = load_host()
    nodes = []
    for node in host.numa_nodes:
        pools = tuple(
            p.model_copy(update={"total": 4 if node.id == 0 else 10}) for p in node.memory.hugepages
        )
        nodes.append(
            node.model_copy(update={"memory": node.memory.model_copy(update={"hugepages": pools})})
        )
    uneven = host.model_copy(update={"numa_nodes": tuple(nodes)})
    tuning = compute_host_tuning([load_config("figure8")], uneven)
    assert "hugepages=0:4,1:10" in tuning.cmdline
    assert (
        "echo 10 > /sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages"
        in render_host_tuning([load_config("figure8")], uneven).text
    )


def test_configurations_needing_more_pages_than_the_pool_warn() -> None:
    host = load_host()
    nodes = tuple(
        n.model_copy(update={"memory": n.memory.model_copy(update={"hugepages": ()})})
        for n in host.numa_nodes
    )
    tuning = compute_host_tuning(
        [load_config("vran-du")], host.model_copy(update={"numa_nodes": nodes})
    )
    assert "hugepages=0:16" in tuning.cmdline
    assert any("more than the host's pool" in w for w in tuning.warnings)


def test_irq_plan_keeps_nic_and_vf_interrupts_on_local_housekeeping_pus() -> None:
    host = load_host()
    tuning = compute_host_tuning(_all_configs(), host)
    node_of = {cpu.id: node.id for node in host.numa_nodes for cpu in node.cpus}
    housekeeping = set(tuning.housekeeping)
    by_address = {a.pci_address: a for a in tuning.irq_plan}
    # every port of the host and every VF a VM holds has an entry
    ports = {p.pci_address for node in host.numa_nodes for p in node.ports}
    vfs = {i.pci_address for c in _all_configs() for i in c.interfaces if i.mode.value == "sriov"}
    assert set(by_address) == ports | vfs
    for assignment in tuning.irq_plan:
        assert assignment.cpus
        assert set(assignment.cpus) <= housekeeping
        assert {node_of[pu] for pu in assignment.cpus} == {assignment.numa_node}
    assert by_address["0000:18:02.0"].cpus == (0, 40)
    assert by_address["0000:af:02.1"].cpus == (20, 60)
    assert "given whole to dataplane-vm" in by_address["0000:af:00.0"].label
    text = render_host_tuning(_all_configs(), host).text
    assert "echo 20,60 > /proc/irq/$irq/smp_affinity_list" in text
    assert "irqbalance" in text


def test_without_a_host_only_held_pus_are_isolated() -> None:
    config = load_config("vran-du")
    tuning = compute_host_tuning([config])
    assert set(tuning.isolated) == set(config.held_cpus)
    assert tuning.housekeeping == ()
    assert not any(a.startswith("irqaffinity") for a in tuning.cmdline)
    assert "hugepages=0:16" in tuning.cmdline
    assert any("give --host" in w for w in tuning.warnings)
    assert all(a.cpus == () for a in tuning.irq_plan)


def test_no_reserved_pu_isolates_nothing_and_warns() -> None:
    host = load_host()
    nodes = tuple(
        n.model_copy(
            update={"cpus": tuple(c.model_copy(update={"eligible": True}) for c in n.cpus)}
        )
        for n in host.numa_nodes
    )
    tuning = compute_host_tuning(
        [load_config("figure8")], host.model_copy(update={"numa_nodes": nodes})
    )
    assert tuning.isolated == ()
    assert not any(a.startswith("isolcpus") for a in tuning.cmdline)
    assert any("no PU as host-reserved" in w for w in tuning.warnings)


def test_amd_hosts_get_amd_iommu() -> None:
    host = load_host()
    amd = host.model_copy(
        update={"processor": host.processor.model_copy(update={"vendor": "AuthenticAMD"})}
    )
    cmdline = compute_host_tuning([load_config("figure8")], amd).cmdline
    assert "amd_iommu=on" in cmdline
    assert "intel_iommu=on" not in cmdline


def test_no_passthrough_no_iommu() -> None:
    cmdline = compute_host_tuning([load_config("plain")]).cmdline
    assert not any("iommu" in a for a in cmdline)


def test_refusals() -> None:
    with pytest.raises(NfvplaceError) as info:
        compute_host_tuning([])
    assert info.value.code == errors.RENDER_UNSUPPORTED
    other = load_config("plain").model_copy(update={"host": "compute-99"})
    with pytest.raises(NfvplaceError) as info:
        compute_host_tuning([load_config("figure8"), other])
    assert info.value.code == errors.RENDER_MISMATCH
    with pytest.raises(NfvplaceError) as info:
        compute_host_tuning([other], load_host())
    assert info.value.code == errors.RENDER_MISMATCH
    far = load_config("plain").model_copy(
        update={"shared": load_config("plain").shared.model_copy(update={"cpus": (500,)})}  # type: ignore[union-attr]
    )
    with pytest.raises(NfvplaceError) as info:
        compute_host_tuning([far], load_host())
    assert info.value.code == errors.RENDER_INVALID
    assert "500" in str(info.value)


def test_host_alone_is_enough() -> None:
    tuning = compute_host_tuning([], load_host())
    assert tuning.housekeeping == (0, 20, 40, 60)
    assert "hugepages=48" in tuning.cmdline


def test_pure() -> None:
    host: ComputeHostDescriptor = load_host()
    configs = _all_configs()
    before = (host.model_dump(), [c.model_dump() for c in configs])
    first = render_host_tuning(configs, host)
    assert (host.model_dump(), [c.model_dump() for c in configs]) == before
    assert render_host_tuning(configs, host) == first


def test_pus_the_host_reports_shared_are_not_isolated() -> None:
    host = load_host()
    nodes = tuple(
        n.model_copy(
            update={
                "cpus": tuple(
                    c.model_copy(update={"state": CpuState.shared, "oversubscription_ratio": 4.0})
                    if c.id in (10, 50)
                    else c
                    for c in n.cpus
                )
            }
        )
        for n in host.numa_nodes
    )
    tuning = compute_host_tuning([], host.model_copy(update={"numa_nodes": nodes}))
    assert not {10, 50} & set(tuning.isolated)
    assert {9, 11, 49, 51} <= set(tuning.isolated)
