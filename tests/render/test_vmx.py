"""VMware .vmx settings (seed 000)."""

from __future__ import annotations

import pytest

from nfvplace.models import VmConfiguration
from nfvplace.render import render_vmx
from nfvplace.render.vmx import esxi_pci_id

from ._support import load_config, load_host, load_vm


def _settings(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition(" = ")
        assert value.startswith('"'), line
        assert value.endswith('"'), line
        assert key not in out, f"{key} set twice"
        out[key] = value[1:-1]
    return out


@pytest.mark.parametrize(
    ("address", "esxi"),
    [
        ("0000:af:00.0", "00000:175:00.0"),
        ("0000:18:02.1", "00000:024:02.1"),
        ("0001:0d:1d.7", "00001:013:29.7"),
    ],
)
def test_esxi_pci_ids_are_decimal(address: str, esxi: str) -> None:
    assert esxi_pci_id(address) == esxi


def test_every_vcpu_pinned_exclusively() -> None:
    config = load_config("figure8")
    settings = _settings(render_vmx(config).text)
    pins = {v: pu for cs in config.cpu_sets for v, pu in cs.vcpu_pins.items()}
    assert {
        int(k[len("sched.vcpu") : -len(".affinity")]): int(v)
        for k, v in settings.items()
        if k.endswith(".affinity") and k.startswith("sched.vcpu")
    } == pins
    assert settings["sched.cpu.affinity.exclusive"] == "TRUE"
    assert settings["sched.cpu.affinity.exclusiveType"] == "loose"  # pairs on HT twins
    assert settings["numvcpus"] == "14"
    assert settings["numa.nodeAffinity"] == "0,1"


def test_memory_pinned_and_1g_pages() -> None:
    settings = _settings(render_vmx(load_config("figure8")).text)
    assert settings["sched.mem.min"] == "14336"
    assert settings["sched.mem.pin"] == "TRUE"
    assert settings["sched.mem.prealloc"] == "TRUE"
    assert settings["sched.mem.lpage.enable1GPage"] == "TRUE"


def test_passthrough_devices() -> None:
    result = render_vmx(load_config("figure8"), host=load_host())
    settings = _settings(result.text)
    assert settings["pciPassthru0.id"] == "00000:175:00.0"
    assert settings["pciPassthru0.vendorId"] == "0x8086"
    assert settings["pciPassthru1.pfId"] == "00000:175:00.1"
    assert any("0000:af:02.1 of the configuration is not enforced" in w for w in result.warnings)


def test_realtime_latency_profile() -> None:
    result = render_vmx(load_config("vran-du"), load_vm("vran-du"), load_host())
    settings = _settings(result.text)
    assert settings["sched.cpu.latencySensitivity"] == "high"
    assert settings["sched.cpu.affinity.exclusiveNoStats"] == "TRUE"
    assert settings["timeTracker.lowLatency"] == "TRUE"
    assert settings["monitor.forceEnableMPTI"] == "TRUE"
    assert settings["sched.cpu.min"] == str(2500 * 8)
    assert any("per-vCPU FIFO" in w for w in result.warnings)
    without_host = render_vmx(load_config("vran-du"))
    assert "sched.cpu.min" not in _settings(without_host.text)
    assert any("sched.cpu.min" in w for w in without_host.warnings)


def test_plain_vm_floats_without_exclusivity() -> None:
    settings = _settings(render_vmx(load_config("plain")).text)
    assert settings["sched.vcpu0.affinity"] == "36,37,38,39"
    assert "sched.cpu.affinity.exclusive" not in settings
    assert "sched.mem.pin" not in settings
    assert settings["ethernet0.virtualDev"] == "vmxnet3"


def test_vhost_user_has_no_vmware_equivalent() -> None:
    result = render_vmx(load_config("vhost-user"))
    assert sum("no vhost-user" in w for w in result.warnings) == 2


def test_mixed_vm_warns_that_affinity_is_not_exclusive() -> None:
    config = VmConfiguration.model_validate(
        {
            "vm": "m",
            "host": "h",
            "cpu_sets": [{"id": 0, "numa_node": 0, "vcpu_pins": {0: 1}, "memory_mib": 1024}],
            "shared": {"vcpus": 1, "cpus": [8, 9]},
        }
    )
    result = render_vmx(config)
    assert "sched.cpu.affinity.exclusive" not in _settings(result.text)
    assert any("cannot be exclusive" in w for w in result.warnings)


def test_pure() -> None:
    config = load_config("vran-du")
    before = config.model_dump()
    assert render_vmx(config) == render_vmx(config)
    assert config.model_dump() == before
