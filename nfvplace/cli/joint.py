"""Helpers of `nfvplace place` for joint placement: several `--vm`, `--count`, `--mode max`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from .. import errors
from ..errors import DescriptorError, Issue
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration, VmConfigurations
from ..models.loading import dump
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from ..placement import MovesAdvice, PlacementResult
from ..reader import load


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


def moves_advice(
    hosts: list[ComputeHostDescriptor],
    vm: VmDescriptor | VnfTemplate | list[VmDescriptor],
    config_paths: list[Path],
    **options: Any,
) -> MovesAdvice | None:
    """`--suggest-moves`: moves of the VMs in `config_paths` that make room for one VM (read-only)."""
    from ..placement import suggest_moves

    if not isinstance(vm, VmDescriptor):
        raise DescriptorError(
            errors.INPUT_INVALID,
            "--suggest-moves advises for one VM Descriptor, not a VNF template or a batch",
            issues=(Issue("give one --vm VM Descriptor", path="--suggest-moves"),),
        )
    configs: list[VmConfiguration] = []
    for path in config_paths:
        loaded = load(path)
        for item in loaded if isinstance(loaded, list) else [loaded]:
            if isinstance(item, VmConfigurations):  # a VNF's or a batch's placement
                configs.extend(item.configurations)
                continue
            if not isinstance(item, VmConfiguration):
                raise DescriptorError(
                    errors.INPUT_UNKNOWN_KIND,
                    f"expected VM Configurations, found a {type(item).__name__}",
                    file=str(path),
                    issues=(Issue("give --config VM Configuration files", path="schema"),),
                )
            configs.append(item)
    return suggest_moves(hosts, vm, configs, **options)


def echo_moves(advice: MovesAdvice | None) -> None:
    if advice is None:
        typer.echo("no move of at most 2 placed VMs makes room for it")
        return
    typer.echo("moves that would make room (read-only: nothing is moved):")
    for move in advice.moves:
        typer.echo(f"  move {move.instance} ({move.vm}) from {move.source} to {move.target}")
    typer.echo(f"then it fits on {advice.configuration.host}:")
    typer.echo(dump(advice.configuration), nl=False)
