"""Rendering several VM Configurations (a placed VNF): one result per VM, and one text for them all.

`render_configurations` renders each configuration with the descriptor named in it (taken from a
VM Descriptor or a VNF template given as `vm`); `join_rendered` turns the results into one text that
the target's tools read as it is: a `<domains>` document holding every `<domain>` for libvirt (an XML
tool parses it; `xmllint --xpath '/domains/domain[1]'` extracts one), a YAML stream (`---` between
documents) for OpenStack. A `.vmx` file holds one VM, so several are only written one file each
(`output_name` gives the file names). docs/render.md documents the choice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lxml import etree

from .. import errors
from ..errors import Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from .result import RenderResult

SUFFIXES = {"libvirt": ".xml", "openstack": ".yaml", "vmx": ".vmx", "host-tuning": ".sh"}


Described = VmDescriptor | VnfTemplate | Sequence[VmDescriptor]
"""What the configurations were placed from: one VM, a VNF template, or a batch of VMs."""


def descriptors_of(vm: Described | None) -> dict[str, VmDescriptor]:
    """VM Descriptors by name: the one given, every member of a VNF template, or a batch's."""
    if vm is None:
        return {}
    if isinstance(vm, VmDescriptor):
        return {vm.name: vm}
    if isinstance(vm, VnfTemplate):
        return {m.descriptor.name: m.descriptor for m in vm.members if m.descriptor is not None}
    return {d.name: d for d in vm}


def render_configurations(
    configs: Sequence[VmConfiguration],
    fmt: str,
    *,
    vm: Described | None = None,
    host: ComputeHostDescriptor | None = None,
) -> tuple[RenderResult, ...]:
    """Each configuration rendered in `fmt`, with the descriptor of its VM when `vm` holds it.

    A `vm` that names none of the configurations' VMs is refused (`nfvplace.render.mismatch`).
    """
    from . import render

    known = descriptors_of(vm)
    if vm is not None and not any(c.vm in known for c in configs):
        names = sorted({c.vm for c in configs})
        raise NfvplaceError(
            errors.RENDER_MISMATCH,
            f"the descriptor given describes {sorted(known)} but the configurations place {names}",
            issues=(Issue("wrong descriptor", path="vm", hint=f"pass the VMD of {names[0]}"),),
        )
    return tuple(render(c, fmt, vm=known.get(c.vm), host=host) for c in configs)


def output_name(config: VmConfiguration, fmt: str) -> str:
    """A file name for one rendered configuration: its owner name, made safe for a path."""
    stem = re.sub(r"[^A-Za-z0-9._@-]", "_", config.owner).lstrip(".") or "vm"
    return stem + SUFFIXES.get(fmt, ".txt")


def check_joinable(count: int, fmt: str) -> None:
    """Refuse to put several VMs in one output of a format that holds one (`.vmx`)."""
    if count <= 1 or fmt in ("libvirt", "openstack"):
        return
    raise NfvplaceError(
        errors.RENDER_UNSUPPORTED,
        f"a .vmx file holds one VM; {count} VM Configurations cannot share one output",
        issues=(
            Issue(
                "several VMs",
                path="--out",
                hint="give -o DIR to write one .vmx file per VM, or render one configuration",
            ),
        ),
    )


def join_rendered(results: Sequence[RenderResult], fmt: str) -> str:
    """One text holding every result, in a form the target's tools parse (see the module doc)."""
    check_joinable(len(results), fmt)
    if len(results) == 1:
        return results[0].text
    if fmt == "libvirt":
        return _domains(results)
    return "---\n".join(r.text for r in results)


def _domains(results: Sequence[RenderResult]) -> str:
    root = etree.Element("domains")
    root.append(
        etree.Comment(
            f" nfvplace: {len(results)} libvirt domains. To define them, write one file per "
            "domain (nfvplace render -o DIR), or take one out with the XPath /domains/domain[1] "
        )
    )
    for result in results:
        root.append(etree.fromstring(result.text))
    etree.indent(root, space="  ")
    return etree.tostring(root, encoding="unicode") + "\n"
