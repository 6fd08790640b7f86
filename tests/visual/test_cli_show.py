"""`nfvplace show`: a host (with configurations) or a fleet heatmap, SVG on stdout or SVG/PNG files."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import pytest
from typer.testing import CliRunner

import nfvplace
from nfvplace.cli import _register, app
from nfvplace.models import ComputeHostDescriptor, VmConfiguration
from nfvplace.models.configuration import VmConfigurations

from .conftest import EXAMPLES

_register()
runner = CliRunner()
SVG = "{http://www.w3.org/2000/svg}"
Placed = tuple[ComputeHostDescriptor, tuple[VmConfiguration, ...]]


@pytest.fixture
def files(tmp_path: Path, dell: ComputeHostDescriptor, placed: Placed) -> Path:
    (tmp_path / "host.yaml").write_text(nfvplace.dump(dell))
    for k, config in enumerate(placed[1]):
        (tmp_path / f"config-{k}.yaml").write_text(nfvplace.dump(config))
    return tmp_path


def test_host_with_configurations_as_svg_on_stdout(files: Path, placed: Placed) -> None:
    args = ["show", str(files / "host.yaml")]
    for k in range(len(placed[1])):
        args += ["--config", str(files / f"config-{k}.yaml")]
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    root = ElementTree.fromstring(out.stdout)
    pins = placed[1][0].cpu_sets[0].vcpu_pins
    marked = {g.get("id") for g in root.iter(f"{SVG}g") if "vm-0" in (g.get("class") or "")}
    assert {f"pu-{pu}" for pu in pins.values()} <= marked


def test_png_and_svg_files_by_suffix(files: Path) -> None:
    png, svg = files / "host.png", files / "fleet.svg"
    out = runner.invoke(app, ["show", str(files / "host.yaml"), "-o", str(png)])
    assert out.exit_code == 0, out.output
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    out = runner.invoke(
        app, ["show", "--hosts", str(EXAMPLES / "fleet"), "--heatmap", "-o", str(svg)]
    )
    assert out.exit_code == 0, out.output
    cells = [g for g in ElementTree.parse(svg).iter(f"{SVG}g") if g.get("class") == "cell"]
    assert {g.get("data-host") for g in cells} == {f"compute-{k:02d}" for k in range(1, 11)}


def test_a_host_of_a_fleet_by_id() -> None:
    out = runner.invoke(app, ["show", "--hosts", str(EXAMPLES / "fleet"), "--id", "compute-03"])
    assert out.exit_code == 0, out.output
    assert ElementTree.fromstring(out.stdout).findtext(f"{SVG}title") == "host compute-03"


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--hosts", "FLEET", "--id", "nope"], 1, "nfvplace.input.reference"),
        (["HOST", "--config", "HOST"], 1, "expected VM Configurations"),
        (["HOST", "--config", "FOREIGN"], 1, "is for host"),
        (["HOST", "-o", "out.gif"], 2, ".svg or .png"),
        (["--hosts", "FLEET"], 2, "--id ID"),
        ([], 2, "HOST_FILE or --hosts"),
        (["HOST", "--hosts", "FLEET", "--heatmap"], 2, "HOST_FILE or --hosts"),
    ],
)
def test_bad_input_says_what_to_fix(files: Path, args: list[str], code: int, says: str) -> None:
    foreign = files / "foreign.yaml"
    foreign.write_text(
        (EXAMPLES / "configurations" / "dataplane-vm-on-compute-07.yaml").read_text()
    )
    names = {
        "FLEET": str(EXAMPLES / "fleet"),
        "HOST": str(files / "host.yaml"),
        "FOREIGN": str(foreign),
    }
    out = runner.invoke(app, ["show", *[names.get(a, a) for a in args]])
    assert out.exit_code == code, out.output
    assert says in out.output
    assert "Traceback" not in out.output


def test_a_vnf_placement_document_draws_its_members_on_this_host(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.mkdir()
    for name in ("dell-r740-2s-gold-6230-snc2", "cisco-ucs-2s-manyvfs"):
        (hosts / f"{name}.yaml").write_text((EXAMPLES / "hosts" / f"{name}.yaml").read_text())
    out = runner.invoke(
        app, ["place", "--hosts", str(hosts), "--vm", str(EXAMPLES / "vnf" / "ran-site.yaml")]
    )
    assert out.exit_code == 0, out.output
    (tmp_path / "site.yaml").write_text(out.stdout)
    site = nfvplace.load(tmp_path / "site.yaml")
    assert isinstance(site, VmConfigurations)
    host_id = site.configurations[0].host
    drawn = runner.invoke(
        app,
        ["show", "--hosts", str(hosts), "--id", host_id, "--config", str(tmp_path / "site.yaml")],
    )
    assert drawn.exit_code == 0, drawn.output
    legend = [
        g
        for g in ElementTree.fromstring(drawn.stdout).iter(f"{SVG}g")
        if "legend-vm" in (g.get("class") or "")
    ]
    assert len(legend) == sum(1 for c in site.configurations if c.host == host_id)
