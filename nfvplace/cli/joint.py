"""Helpers of `nfvplace place` for joint placement: several `--vm`, `--count`, `--mode max`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import typer

from .. import errors
from ..errors import DescriptorError, Issue
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from ..placement import PlacementResult


def target(
    paths: list[Path], load_vm: Callable[[Path], VmDescriptor | VnfTemplate]
) -> VmDescriptor | VnfTemplate | list[VmDescriptor]:
    """One VM Descriptor or VNF template, or (several `--vm`) a batch of VM Descriptors."""
    loaded = [load_vm(path) for path in paths]
    if len(loaded) == 1:
        return loaded[0]
    templates = [p for p, d in zip(paths, loaded, strict=True) if isinstance(d, VnfTemplate)]
    if templates:
        raise DescriptorError(
            errors.INPUT_INVALID,
            "a VNF template is placed on its own, not in a batch with other --vm files",
            file=str(templates[0]),
            issues=(Issue("give the template alone, or list its VMs as --vm", path="--vm"),),
        )
    return [d for d in loaded if isinstance(d, VmDescriptor)]


def echo_unplaced(result: PlacementResult) -> None:
    """`--mode max`: the instances that did not fit, one line each on stderr."""
    for item in result.unplaced:
        typer.echo(f"not placed: {item.member} instance {item.instance}: {item.reason}", err=True)
