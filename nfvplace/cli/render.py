"""`nfvplace render`: a VM Configuration as libvirt XML, OpenStack extra specs, .vmx or host tuning."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import errors
from ..errors import Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from ..reader import load_file
from ..render import FORMATS, render, render_host_tuning
from . import app


def _load[T](path: Path, kind: type[T], what: str, option: str) -> T:
    loaded = load_file(path)
    if not isinstance(loaded, kind):
        raise NfvplaceError(
            errors.INPUT_UNKNOWN_KIND,
            f"{option} expects {what}, got a {type(loaded).__name__}",
            file=str(path),
            issues=(Issue("wrong kind of document", path="schema", hint=f"pass {what}"),),
        )
    return loaded


def _fail(exc: NfvplaceError) -> None:
    typer.echo(f"error [{exc.code}]: {exc}", err=True)
    raise typer.Exit(1)


@app.command("render")
def render_command(
    configs: Annotated[
        list[Path],
        typer.Argument(
            help="VM Configuration file(s); several only with --format host-tuning",
            metavar="CONFIG",
        ),
    ],
    fmt: Annotated[
        str,
        typer.Option("--format", "-f", help=f"Target: {', '.join(FORMATS)}", metavar="FORMAT"),
    ],
    vm: Annotated[
        Path | None,
        typer.Option("--vm", help="The VM Descriptor the configuration was placed from"),
    ] = None,
    host: Annotated[
        Path | None, typer.Option("--host", help="The Compute Host Descriptor of the host")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write here instead of standard output")
    ] = None,
) -> None:
    """Render VM Configurations for a deployment target; warnings go to standard error."""
    try:
        if fmt not in FORMATS:
            raise NfvplaceError(
                errors.RENDER_UNSUPPORTED,
                f"unknown format {fmt!r}",
                issues=(
                    Issue(
                        "unknown format", path="--format", hint=f"use one of {', '.join(FORMATS)}"
                    ),
                ),
            )
        if len(configs) > 1 and fmt != "host-tuning":
            raise NfvplaceError(
                errors.RENDER_UNSUPPORTED,
                f"--format {fmt} renders one VM Configuration, got {len(configs)}",
                issues=(
                    Issue(
                        "too many files",
                        path="CONFIG",
                        hint="pass one file, or use --format host-tuning",
                    ),
                ),
            )
        loaded = [_load(path, VmConfiguration, "a VM Configuration", "CONFIG") for path in configs]
        vmd = _load(vm, VmDescriptor, "a VM Descriptor", "--vm") if vm else None
        chd = (
            _load(host, ComputeHostDescriptor, "a Compute Host Descriptor", "--host")
            if host
            else None
        )
        if fmt == "host-tuning":
            result = render_host_tuning(loaded, chd)
        else:
            result = render(loaded[0], fmt, vm=vmd, host=chd)
        if out is not None:
            try:
                out.write_text(result.text, encoding="utf-8")
            except OSError as exc:
                raise NfvplaceError(
                    errors.INPUT_UNREADABLE,
                    f"cannot write {out}: {exc.strerror or exc}",
                    file=str(out),
                ) from exc
        else:
            typer.echo(result.text, nl=False)
    except NfvplaceError as exc:
        _fail(exc)
        return
    for warning in result.warnings:
        typer.echo(f"warning: {warning}", err=True)
