"""`nfvplace place`: place one VM Descriptor (or a VNF template) on the given hosts.

The VM (or VNF template) is linted first: what `nfvplace lint` refuses is refused here, with lint's
rule ids. Exit codes: 0 placed (one VM Configuration, or one vm-configurations document for a VNF, on
stdout), 3 no host fits (the summary and each host's reason on stderr), 1 invalid input (the error with
its code, file and field on stderr), 2 usage error (an unknown --format).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from .. import errors
from ..errors import DescriptorError, Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration, VmConfigurations
from ..models.loading import dump
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from ..placement.result import PlacementResult
from ..reader import load
from ..render.several import render_configurations
from . import app
from .common import check_choice, emit_rendered, fail, write_text

FORMATS = ("yaml", "json", "libvirt")
EXIT_NO_FIT = 3


def _load_hosts(paths: list[Path]) -> list[ComputeHostDescriptor]:
    hosts: list[ComputeHostDescriptor] = []
    for path in paths:
        loaded = load(path)
        items = loaded if isinstance(loaded, list) else [loaded]
        for item in items:
            if not isinstance(item, ComputeHostDescriptor):
                raise DescriptorError(
                    errors.INPUT_UNKNOWN_KIND,
                    f"expected Compute Host Descriptors, found a {type(item).__name__}",
                    file=str(path),
                    issues=(
                        Issue(
                            "not a CHD",
                            path="schema",
                            hint="give files with schema: nfvplace/chd/v1",
                        ),
                    ),
                )
            hosts.append(item)
    if not hosts:
        raise DescriptorError(
            errors.INPUT_UNREADABLE,
            "no host descriptor found",
            file=", ".join(str(p) for p in paths),
            issues=(Issue("empty folder", path="--hosts", hint="point --hosts at CHD files"),),
        )
    return hosts


def _load_vm(path: Path) -> VmDescriptor | VnfTemplate:
    loaded = load(path)
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


def _document(
    descriptor: VmDescriptor | VnfTemplate | list[VmDescriptor],
    configs: tuple[VmConfiguration, ...],
) -> VmConfiguration | VmConfigurations:
    """One VM Configuration for one VM; one vm-configurations document for a VNF or a batch."""
    if isinstance(descriptor, VmDescriptor) and len(configs) == 1:
        return configs[0]
    vnf = descriptor.name if isinstance(descriptor, VnfTemplate) else None
    return VmConfigurations(vnf=vnf, configurations=configs)


def _lint_first(path: Path) -> None:
    """Refuse what `nfvplace lint` refuses, with its rule ids (exit 1, findings on stderr)."""
    from ..lint import lint_file, refuse_errors

    refuse_errors(lint_file(path), "VM Descriptor or VNF template")


@app.command("place")
def place_command(
    hosts: Annotated[
        list[Path],
        typer.Option("--hosts", help="CHD files or folders (repeat, or list several after it)"),
    ],
    vm: Annotated[
        list[Path],
        typer.Option(
            "--vm", help="VM Descriptor or VNF template (repeat: a batch, placed jointly)"
        ),
    ],
    more_hosts: Annotated[
        list[Path] | None, typer.Argument(help="More CHD files or folders", show_default=False)
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="yaml | json | libvirt")] = "yaml",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write here instead of stdout; with --format libvirt and several VMs, a folder",
        ),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Say, host by host, why the winner won (stderr)")
    ] = False,
    policy: Annotated[
        str, typer.Option("--policy", help="pack | spread | least-fragmentation")
    ] = "pack",
    seed: Annotated[int, typer.Option("--seed", help="Tie-break seed")] = 0,
    count: Annotated[
        int, typer.Option("--count", help="Instances of each --vm, placed jointly", min=1)
    ] = 1,
    mode: Annotated[
        str, typer.Option("--mode", help="all (all or nothing) | max (as many as fit)")
    ] = "all",
) -> None:
    """Place one VM, every member of a VNF template, or a batch (several --vm), on the hosts."""
    from ..placement import place
    from .joint import echo_unplaced, target

    check_choice(fmt, FORMATS)
    try:
        for path in vm:
            _lint_first(path)
        fleet = _load_hosts(list(hosts) + list(more_hosts or []))
        descriptor = target(vm, _load_vm)
        result = place(
            fleet, descriptor, policy=policy, seed=seed, explain=explain, count=count, mode=mode
        )
        if explain:
            for line in result.explanation:
                typer.echo(f"# {line}", err=True)
        if not result.ok:
            _no_fit(result, vm, fmt)
        echo_unplaced(result)
        configs = result.configurations
        if fmt == "libvirt":
            rendered = render_configurations(configs, "libvirt", vm=descriptor)
            emit_rendered(configs, rendered, "libvirt", out)
            return
        text = dump(_document(descriptor, configs), fmt)
        if out is None:
            typer.echo(text, nl=False)
        else:
            write_text(out, text)
    except NfvplaceError as error:
        raise fail(error) from None


def _no_fit(result: PlacementResult, vm: list[Path], fmt: str) -> NoReturn:
    """No host fits: the reasons on stderr (as JSON on stdout with --format json); exit 3."""
    diagnosis = result.diagnosis
    assert diagnosis is not None
    if fmt == "json":
        typer.echo(json.dumps(diagnosis.to_dict(), indent=2))
    typer.echo(f"no host fits {', '.join(map(str, vm))}: {diagnosis.summary}", err=True)
    for rejection in diagnosis.rejections:
        typer.echo(f"  {rejection.host}: [{rejection.reason}] {rejection.message}", err=True)
    raise typer.Exit(EXIT_NO_FIT)
