from __future__ import annotations

from pathlib import Path

import pytest

import nfvplace
from nfvplace.models import ComputeHostDescriptor, VmConfiguration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="session")
def dell() -> ComputeHostDescriptor:
    host = nfvplace.load(EXAMPLES / "hosts" / "dell-r740-2s-gold-6230-snc2.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    return host


@pytest.fixture(scope="session")
def placed(
    dell: ComputeHostDescriptor,
) -> tuple[ComputeHostDescriptor, tuple[VmConfiguration, ...]]:
    """The vRAN DU and the figure 8 VM placed one after the other on the Dell host (the real engine)."""
    host, configs = dell, []
    for name in ("vran-du.yaml", "nfv-per-001-figure8.yaml"):
        result = nfvplace.place([host], nfvplace.load(EXAMPLES / "vms" / name))
        configs.append(result.configuration)
        host = result.hosts[host.id]
    return host, tuple(configs)
