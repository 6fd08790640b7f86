"""`nfvplace.render.render`: one entry point for every target."""

from __future__ import annotations

import pytest

from nfvplace import errors
from nfvplace.errors import NfvplaceError
from nfvplace.render import FORMATS, RenderResult, render

from ._support import load_config, load_host, load_vm


def test_formats() -> None:
    assert FORMATS == ("libvirt", "openstack", "vmx", "host-tuning")


@pytest.mark.parametrize(
    ("fmt", "marker"),
    [
        ("libvirt", "<domain"),
        ("openstack", "extra_specs:"),
        ("vmx", "sched.vcpu0.affinity"),
        ("host-tuning", "isolcpus="),
    ],
)
def test_each_format(fmt: str, marker: str) -> None:
    result = render(load_config("figure8"), fmt, vm=load_vm("figure8"), host=load_host())
    assert isinstance(result, RenderResult)
    assert marker in result.text


@pytest.mark.parametrize("fmt", ["yaml", "LIBVIRT", "", "ovf"])
def test_unknown_format_has_a_stable_code(fmt: str) -> None:
    with pytest.raises(NfvplaceError) as info:
        render(load_config("plain"), fmt)
    assert info.value.code == errors.RENDER_UNSUPPORTED
    assert "libvirt, openstack, vmx, host-tuning" in str(info.value)
