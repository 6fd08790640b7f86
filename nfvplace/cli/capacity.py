"""`nfvplace capacity`: how many more instances of a VM fit on the hosts, and where (read-only).

Exit codes: 0 (the report on stdout, also when nothing fits: the count is then 0), 1 invalid input
(a VM that `nfvplace lint` refuses, with its rule ids).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from .. import errors
from ..errors import DescriptorError, Issue, NfvplaceError
from .application import app
from .common import check_choice, fail

FORMATS = ("text", "json")


@app.command("capacity")
def capacity_command(
    hosts: Annotated[
        list[Path],
        typer.Option("--hosts", help="CHD files or folders (repeat, or list several after it)"),
    ],
    vm: Annotated[Path, typer.Option("--vm", help="VM Descriptor")],
    more_hosts: Annotated[
        list[Path] | None, typer.Argument(help="More CHD files or folders", show_default=False)
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="text | json")] = "text",
) -> None:
    """How many more instances of the VM fit, on which hosts, and what runs out first on each."""
    from ..models.vmd import VmDescriptor
    from ..placement import capacity
    from .inputs import load_hosts, load_vm

    check_choice(fmt, FORMATS)
    try:
        descriptor = load_vm(vm)
        if not isinstance(descriptor, VmDescriptor):
            raise DescriptorError(
                errors.INPUT_UNKNOWN_KIND,
                "capacity counts instances of one VM Descriptor, not a VNF template",
                file=str(vm),
                issues=(Issue("give a VM Descriptor", path="schema"),),
            )
        fleet = load_hosts(list(hosts) + list(more_hosts or []))
        report = capacity(fleet, descriptor)
    except NfvplaceError as error:
        raise fail(error) from None
    if fmt == "json":
        typer.echo(json.dumps(report.to_dict(), indent=2))
        return
    typer.echo(f"{report.count} more instances of {report.vm} fit on {len(report.hosts)} hosts")
    for host in report.hosts:
        typer.echo(f"  {host.host}: {host.count} (then {host.limited_by} run out)")
