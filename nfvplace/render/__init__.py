"""Renderers: a VM Configuration as libvirt domain XML, OpenStack flavor extra specs, VMware .vmx
settings, or host tuning (kernel command line and IRQ plan).

Every renderer is a pure function of its inputs returning a `RenderResult(text, warnings)`; a
warning names each requirement the target cannot express exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from .. import errors
from ..errors import Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from .host_tuning import HostTuning, compute_host_tuning, render_host_tuning
from .libvirt import render_libvirt
from .openstack import render_openstack
from .result import RenderResult
from .vmx import render_vmx

Renderer = Callable[
    [VmConfiguration, VmDescriptor | None, ComputeHostDescriptor | None], RenderResult
]


def _host_tuning(
    config: VmConfiguration, vm: VmDescriptor | None, host: ComputeHostDescriptor | None
) -> RenderResult:
    return render_host_tuning((config,), host)


RENDERERS: Final[dict[str, Renderer]] = {
    "libvirt": render_libvirt,
    "openstack": render_openstack,
    "vmx": render_vmx,
    "host-tuning": _host_tuning,
}
FORMATS: Final = tuple(RENDERERS)


def render(
    config: VmConfiguration,
    fmt: str,
    *,
    vm: VmDescriptor | None = None,
    host: ComputeHostDescriptor | None = None,
) -> RenderResult:
    """Render one VM Configuration in `fmt` (one of `FORMATS`).

    Raises `NfvplaceError` with code `nfvplace.render.unsupported` for an unknown format,
    `nfvplace.render.invalid` for an inconsistent configuration and `nfvplace.render.mismatch`
    when `vm` or `host` is not the one the configuration names.
    """
    renderer = RENDERERS.get(fmt)
    if renderer is None:
        raise NfvplaceError(
            errors.RENDER_UNSUPPORTED,
            f"unknown render format {fmt!r}",
            issues=(
                Issue(f"format {fmt!r}", path="format", hint=f"use one of {', '.join(FORMATS)}"),
            ),
        )
    return renderer(config, vm, host)


__all__ = [
    "FORMATS",
    "HostTuning",
    "RenderResult",
    "compute_host_tuning",
    "render",
    "render_host_tuning",
    "render_libvirt",
    "render_openstack",
    "render_vmx",
]
