"""Reading the inputs of `place`, `capacity`, `simulate` and `show`: CHD files and folders (with a
progress bar), one VM Descriptor or VNF template, and the document a placement is printed as.

Imported by the commands when they run, never at start-up: the models take a tenth of a second to
build, which `nfvplace --help` and `nfvplace lint FILE` should not pay for.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

from .. import errors
from ..errors import DescriptorError, Issue
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration, VmConfigurations
from ..models.loading import gc_paused, iter_descriptor_files
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from ..reader import load_all
from .progress import progress


def host_files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        yield from iter_descriptor_files(path) if path.is_dir() else (path,)


def load_hosts(paths: list[Path]) -> list[ComputeHostDescriptor]:
    """Every CHD in the files and folders given, with a progress bar when it takes a while."""
    hosts: list[ComputeHostDescriptor] = []
    with gc_paused():
        for path in progress(list(host_files(paths)), "loading hosts"):
            for item in load_all(path):  # one CHD, or each item of a Kubernetes List
                hosts.append(_host(item, path))
    if not hosts:
        raise DescriptorError(
            errors.INPUT_UNREADABLE,
            "no host descriptor found",
            file=", ".join(str(p) for p in paths),
            issues=(Issue("empty folder", path="--hosts", hint="point --hosts at CHD files"),),
        )
    # The descriptors live until the command ends and hold no cycles: out of the collector's
    # sight, the full collections that building the index triggers do not walk them again.
    gc.freeze()
    return hosts


def _host(item: object, path: Path) -> ComputeHostDescriptor:
    if isinstance(item, ComputeHostDescriptor):
        return item
    raise DescriptorError(
        errors.INPUT_UNKNOWN_KIND,
        f"expected Compute Host Descriptors, found a {type(item).__name__}",
        file=str(path),
        issues=(Issue("not a CHD", path="schema", hint="give files with schema: nfvplace/chd/v1"),),
    )


def load_vm(path: Path) -> VmDescriptor | VnfTemplate:
    """The VM Descriptor or VNF template in `path` (a template's member files loaded inline), each
    file read once and passed through the lint gate: what `nfvplace lint` refuses is refused with
    its rule ids (exit 1, findings on stderr)."""
    from ..lint.gate import load_gated

    loaded = load_gated(path, "VM Descriptor or VNF template")
    if isinstance(loaded, VmDescriptor | VnfTemplate):
        return loaded
    raise DescriptorError(
        errors.INPUT_UNKNOWN_KIND,
        f"expected a VM Descriptor or VNF template, found {type(loaded).__name__}",
        file=str(path),
        issues=(
            Issue(
                "wrong kind", path="schema", hint="use schema: nfvplace/vmd/v1 or nfvplace/vnf/v1"
            ),
        ),
    )


def document(
    descriptor: VmDescriptor | VnfTemplate | list[VmDescriptor],
    configs: tuple[VmConfiguration, ...],
) -> VmConfiguration | VmConfigurations:
    """One VM Configuration for one VM; one vm-configurations document for a VNF or a batch."""
    if isinstance(descriptor, VmDescriptor) and len(configs) == 1:
        return configs[0]
    vnf = descriptor.name if isinstance(descriptor, VnfTemplate) else None
    return VmConfigurations(vnf=vnf, configurations=configs)
