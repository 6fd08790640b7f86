"""`nfvplace place`: place one VM Descriptor (or a VNF template) on the given hosts.

Exit codes: 0 placed (the VM Configuration(s) on stdout), 3 no host fits (the summary and each host's
reason on stdout), 1 invalid input (the error with its code, file and field on stderr).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import errors
from ..errors import DescriptorError, Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.loading import dump
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from ..reader import load
from ..render import render
from . import app

FORMATS = ("yaml", "json", "libvirt")
EXIT_NO_FIT = 3


def _fail(error: NfvplaceError) -> typer.Exit:
    typer.echo(f"error [{error.code}]: {error}", err=True)
    return typer.Exit(1)


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


def _render(configs: tuple[VmConfiguration, ...], fmt: str) -> str:
    if fmt == "json":
        docs: list[Any] = [json.loads(dump(c, "json")) for c in configs]
        return json.dumps(docs[0] if len(docs) == 1 else docs, indent=2) + "\n"
    if fmt == "yaml":
        return "---\n".join(dump(c) for c in configs)
    rendered = [render(c, "libvirt") for c in configs]
    for result in rendered:
        for warning in result.warnings:
            typer.echo(f"warning: {warning}", err=True)
    return "".join(result.text for result in rendered)


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
    fmt: Annotated[str, typer.Option("--format", help="yaml | json | libvirt")] = "yaml",
    explain: Annotated[bool, typer.Option("--explain", help="Say why the host won")] = False,
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

    if fmt not in FORMATS:
        raise _fail(
            NfvplaceError(
                errors.PLACEMENT_INVALID_POLICY,
                f"unknown --format {fmt!r}",
                issues=(Issue(f"use one of {', '.join(FORMATS)}", path="--format"),),
            )
        )
    try:
        fleet = _load_hosts(list(hosts) + list(more_hosts or []))
        descriptor = target(vm, _load_vm)
        result = place(
            fleet, descriptor, policy=policy, seed=seed, explain=explain, count=count, mode=mode
        )
        if result.ok:
            text = _render(result.configurations, fmt)
    except NfvplaceError as error:
        raise _fail(error) from None
    if explain:
        for line in result.explanation:
            typer.echo(f"# {line}", err=True)
    if not result.ok:
        diagnosis = result.diagnosis
        assert diagnosis is not None
        if fmt == "json":
            typer.echo(json.dumps(diagnosis.to_dict(), indent=2))
        else:
            typer.echo(f"no host fits {', '.join(map(str, vm))}: {diagnosis.summary}")
            for rejection in diagnosis.rejections:
                typer.echo(f"  {rejection.host}: [{rejection.reason}] {rejection.message}")
        raise typer.Exit(EXIT_NO_FIT)
    echo_unplaced(result)
    typer.echo(text, nl=False)
