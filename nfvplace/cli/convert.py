"""`nfvplace convert FILE`: any dialect to nfvplace's format, or nfvplace's format to a dialect.

The document goes to standard output, the findings (what was not carried, read with an
assumption, or is missing) to standard error. Exit codes: 0 converted, 1 the input is invalid
(or lint refuses a descriptor written to a dialect; with --strict, something was not carried), 2
usage error or unreadable file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from .. import errors
from ..errors import DescriptorError, LintError
from .application import app
from .common import check_choice

UNREADABLE = (errors.INPUT_UNREADABLE, errors.INPUT_TOO_LARGE)
# `nfvplace.conversion.ALL_TARGETS` and `FORMATS`, spelled out so that `--help` need not load the
# dialects (a test keeps them equal)
ALL_TARGETS = ("nfvplace", "nova", "osm", "sol006", "openvim")
FORMATS = ("yaml", "json")


@app.command("convert")
def convert_command(
    path: Annotated[Path, typer.Argument(help="A descriptor in any dialect nfvplace reads")],
    to: Annotated[
        str, typer.Option("--to", help=f"Target: {', '.join(ALL_TARGETS)}", metavar="TARGET")
    ] = "nfvplace",
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="yaml or json", metavar="FORMAT")
    ] = "yaml",
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when anything was not carried or is missing")
    ] = False,
) -> None:
    """Convert a descriptor: the document on stdout, the findings on stderr."""
    from ..conversion import convert

    check_choice(to, ALL_TARGETS, "--to")
    check_choice(fmt, FORMATS)
    try:
        result = convert(path, to=to, strict=strict)
    except (DescriptorError, LintError) as exc:  # LintError: lint refuses what --to would write
        typer.echo(f"error [{exc.code}]: {exc}", err=True)
        raise typer.Exit(2 if exc.code in UNREADABLE else 1) from None
    sys.stdout.write(result.text(fmt))
    for finding in result.findings:
        typer.echo(finding.line(result.source), err=True)
    read_as = f"read as {result.dialect}" if result.dialect else "nfvplace's own format"
    typer.echo(
        f"{result.source}: {read_as}; {len(result.findings)} finding(s)"
        + ("" if result.complete else "; incomplete: see the missing items above"),
        err=True,
    )
    raise typer.Exit(0 if result.ok else 1)
