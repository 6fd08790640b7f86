"""`nfvplace discover`: this host's CHD, or one built from an hwloc XML export."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ..errors import NfvplaceError
from ..models.loading import dump
from . import app
from .discover_many import discover_many, exports_of, several


class OutputFormat(StrEnum):
    yaml = "yaml"
    json = "json"


@app.command("discover")
def discover_command(
    hwloc_xml: Annotated[
        list[Path] | None,
        typer.Option(
            "--hwloc-xml",
            help="Build the CHD from this hwloc XML export (lstopo --of xml); repeat it, or give a "
            "folder, for one CHD per export (-o then names a folder)",
        ),
    ] = None,
    host_id: Annotated[
        str | None, typer.Option("--id", help="Host id (default: hostname, or the file's name)")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the CHD here instead of stdout")
    ] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="yaml or json")] = OutputFormat.yaml,
    sysfs_root: Annotated[
        Path,
        typer.Option(
            "--sysfs-root", help="Read sysfs/procfs under this root (fixture trees, images)"
        ),
    ] = Path("/"),
) -> None:
    """Write this host's Compute Host Descriptor, or one built from an hwloc XML export."""
    from ..discovery import chd_from_hwloc_xml, discover_live

    if hwloc_xml and several(hwloc_xml):
        if host_id is not None:
            raise typer.BadParameter("each export is named after its file", param_hint="--id")
        raise typer.Exit(discover_many(exports_of(hwloc_xml), out, fmt.value, lambda chd: chd))
    try:
        if hwloc_xml:
            chd = chd_from_hwloc_xml(hwloc_xml[0], host_id=host_id)
        else:
            chd = discover_live(sysfs_root=sysfs_root, host_id=host_id)
        text = dump(chd, fmt.value)
    except NfvplaceError as exc:
        typer.echo(f"error [{exc.code}]: {exc}", err=True)
        raise typer.Exit(1) from None
    except Exception as exc:  # an adapter at the edge: never a traceback for the user
        typer.echo(f"error [nfvplace.discovery.failed]: unexpected failure: {exc!r}", err=True)
        raise typer.Exit(1) from None
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        typer.echo(
            f"error [nfvplace.discovery.failed]: cannot write {out}: {exc.strerror or exc}",
            err=True,
        )
        raise typer.Exit(1) from None
    typer.echo(f"wrote {out}", err=True)
