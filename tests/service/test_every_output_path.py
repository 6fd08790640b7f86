"""Every output path carries every requirement of the VM: whatever way a configuration is produced
(`place --format yaml|json|libvirt`, the library, the REST render route) and rendered (with or
without `--vm`), the result is what `render --vm` produces for the same VM and configuration."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import nfvplace
from nfvplace.cli import _register, app
from nfvplace.models import ComputeHostDescriptor, VmConfiguration, VmDescriptor
from nfvplace.render import render

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

_register()
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HOSTS = [str(EXAMPLES / "fleet"), str(EXAMPLES / "hosts")]
VMS = sorted((EXAMPLES / "vms").glob("*.yaml"))
FORMATS = ("libvirt", "openstack", "vmx")


def _cli(*args: str) -> tuple[str, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.stderr
    return result.stdout, result.stderr


@pytest.fixture(scope="module")
def placed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each bundled VM placed once by the CLI, as YAML and as JSON configuration files."""
    folder = tmp_path_factory.mktemp("placed")
    out = {}
    for vm in VMS:
        for fmt in ("yaml", "json"):
            text, _ = _cli("place", "--hosts", *HOSTS, "--vm", str(vm), "--format", fmt)
            path = folder / f"{vm.stem}.{fmt}"
            path.write_text(text, encoding="utf-8")
            out[f"{vm.stem}.{fmt}"] = path
    return out


def _render_cli(fmt: str, config: Path, *extra: str) -> tuple[str, list[str]]:
    text, err = _cli("render", "--format", fmt, str(config), *extra)
    return text, [line for line in err.splitlines() if line.startswith("warning: ")]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("vm", VMS, ids=lambda p: p.stem)
def test_every_cli_and_library_path_renders_what_render_vm_renders(
    vm: Path, fmt: str, placed: dict[str, Path]
) -> None:
    config_file = placed[f"{vm.stem}.yaml"]
    expected = _render_cli(fmt, config_file, "--vm", str(vm))
    assert _render_cli(fmt, config_file) == expected  # render without --vm
    assert _render_cli(fmt, placed[f"{vm.stem}.json"]) == expected  # place --format json
    config = nfvplace.load(config_file)
    assert isinstance(config, VmConfiguration)
    library = render(config, fmt)  # the library, without the descriptor
    assert (library.text, [f"warning: {w}" for w in library.warnings]) == expected
    if fmt == "libvirt":  # place --format libvirt: the domain straight away
        text, _ = _cli("place", "--hosts", *HOSTS, "--vm", str(vm), "--format", "libvirt")
        assert text == expected[0]


def test_the_configuration_records_networks_vlans_and_cpu_set_policies(tmp_path: Path) -> None:
    vmd = {
        "schema": "nfvplace/vmd/v1",
        "name": "tagged",
        "cpu_thread_policy": "isolate",
        "hypervisor": {"type": "kvm", "required_capabilities": ["cpu_pinning"]},
        "cpu_sets": [
            {
                "id": 0,
                "vcpus": [0, 1],
                "memory_mib": 1024,
                "thread_policy": "prefer",
                "interfaces": [
                    {
                        "name": "data",
                        "mode": "sriov",
                        "vlan": 101,
                        "physical_network": "physnet-data",
                    }
                ],
            }
        ],
        "interfaces": [{"name": "mgmt", "mode": "vswitch", "physical_network": "mgmt-net"}],
    }
    path = tmp_path / "tagged.yaml"
    path.write_text(yaml.safe_dump(vmd), encoding="utf-8")
    text, _ = _cli("place", "--hosts", *HOSTS, "--vm", str(path), "--format", "json")
    config = json.loads(text)
    assert config["cpu_sets"][0]["thread_policy"] == "prefer"
    by_name = {i["name"]: i for i in config["interfaces"]}
    assert (by_name["data"]["vlan"], by_name["data"]["physical_network"]) == (101, "physnet-data")
    assert by_name["mgmt"]["physical_network"] == "mgmt-net"
    bare = VmConfiguration.model_validate({**config, "descriptor": None})
    domain = render(bare, "libvirt").text  # a configuration without its descriptor still tags
    assert '<tag id="101"/>' in domain
    flavor = render(bare, "openstack")
    assert "network: mgmt-net" in flavor.text
    assert "network: physnet-data" in flavor.text
    warnings_ = flavor.warnings
    assert any("per-cpu-set thread policies ['prefer']" in w for w in warnings_)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("vm", VMS, ids=lambda p: p.stem)
def test_the_rest_render_route_renders_what_render_vm_renders(
    vm: Path, fmt: str, sqlite_client: TestClient
) -> None:
    descriptor = nfvplace.load(vm)
    assert isinstance(descriptor, VmDescriptor)
    hosts = [h for folder in HOSTS for h in nfvplace.load(folder)]  # type: ignore[union-attr]
    for host in hosts:
        assert isinstance(host, ComputeHostDescriptor)
        body = host.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert sqlite_client.put(f"/v1/hosts/{host.id}", json=body).status_code in (200, 201)
    data = yaml.safe_load(vm.read_text(encoding="utf-8"))
    answer = sqlite_client.post("/v1/placements", json={"vm": data})
    assert answer.status_code == 201, answer.text
    placement = answer.json()
    (stored,) = placement["configurations"]
    rendered = sqlite_client.get(f"/v1/placements/{placement['id']}/render", params={"format": fmt})
    assert rendered.status_code == 200, rendered.text
    (got,) = rendered.json()["renders"]
    expected = render(VmConfiguration.model_validate(stored), fmt, vm=descriptor)
    assert (got["text"], got["warnings"]) == (expected.text, list(expected.warnings))
