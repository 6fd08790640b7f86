"""mkdocs hook: draw the documentation's pictures from the examples at build time, so they never drift.

`mkdocs.yml` lists it under `hooks:`. Every build (including `mkdocs build --strict` in
`scripts/test.sh`) places the example VMs with the real engine and adds the SVGs below as generated
files of the site (nothing is written into `docs/`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

import nfvplace
from nfvplace.models import ComputeHostDescriptor, VmConfiguration, VmDescriptor
from nfvplace.visual import heatmap_svg, host_svg

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FOLDER = "assets/pictures"


def _placed_host() -> tuple[ComputeHostDescriptor, list[VmConfiguration]]:
    host = nfvplace.load(EXAMPLES / "hosts" / "dell-r740-2s-gold-6230-snc2.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    configs: list[VmConfiguration] = []
    for name in ("vran-du.yaml", "nfv-per-001-figure8.yaml"):
        vm = nfvplace.load(EXAMPLES / "vms" / name)
        assert isinstance(vm, VmDescriptor)
        result = nfvplace.place([host], vm)
        configs.append(result.configuration)
        host = result.hosts[host.id]
    return host, configs


def pictures() -> dict[str, str]:
    """File name -> SVG text of every picture the docs show."""
    host, configs = _placed_host()
    fleet = nfvplace.load(EXAMPLES / "fleet")
    assert isinstance(fleet, list)
    hosts = [h for h in fleet if isinstance(h, ComputeHostDescriptor)]
    return {
        "host-with-vran-du.svg": host_svg(host, configs),
        "fleet-heatmap.svg": heatmap_svg(hosts, title="examples/fleet"),
    }


def on_files(files: Files, config: Any, **_: Any) -> Files:
    for name, svg in pictures().items():
        files.append(File.generated(config, f"{FOLDER}/{name}", content=svg))
    return files
