"""`nfvplace discover`: this host's CHD, or one built from an hwloc XML export."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import errors
from ..errors import NfvplaceError
from .application import app
from .discover_many import discover_many, exports_of, several

if TYPE_CHECKING:
    from ..models.chd import ComputeHostDescriptor


class OutputFormat(StrEnum):
    yaml = "yaml"
    json = "json"


def with_facts(
    chd: ComputeHostDescriptor, sets: list[str], defaults: Path | None
) -> ComputeHostDescriptor:
    """`chd` with the `--defaults` file's and the `--set` facts applied (`discover`, `agent`)."""
    from pydantic import ValidationError

    from ..discovery.given import apply_facts, defaults_facts, parse_set
    from ..models.chd import ComputeHostDescriptor
    from ..models.loading import dump, read_document, validation_issues

    facts = []
    if defaults is not None:
        facts.extend(defaults_facts(read_document(defaults).data, str(defaults)))
    facts.extend(parse_set(text) for text in sets)
    data, warnings = apply_facts(json.loads(dump(chd, "json")), facts)
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)
    try:
        return ComputeHostDescriptor.model_validate(data)
    except ValidationError as exc:
        raise NfvplaceError(
            errors.INPUT_INVALID,
            "the facts given make an invalid CHD",
            issues=validation_issues(exc, ComputeHostDescriptor),
        ) from None


HwlocXmlOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--hwloc-xml",
        help="Build the CHD from this hwloc XML export (lstopo --of xml); repeat it, or give a "
        "folder, for one CHD per export (-o then names a folder)",
    ),
]
IdOption = Annotated[
    str | None, typer.Option("--id", help="Host id (default: hostname, or the file's name)")
]
OutOption = Annotated[
    Path | None, typer.Option("--out", "-o", help="Write the CHD here instead of stdout")
]
FormatOption = Annotated[OutputFormat, typer.Option("--format", help="yaml or json")]
SysfsRootOption = Annotated[
    Path,
    typer.Option("--sysfs-root", help="Read sysfs/procfs under this root (fixture trees, images)"),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="KEY=VALUE a fact the source cannot know, e.g. hypervisor.type=kvm or "
        "numa_nodes[*].nics[*].ports[*].speed_gbps=25 (overrides)",
        metavar="KEY=VALUE",
    ),
]
DefaultsOption = Annotated[
    Path | None,
    typer.Option("--defaults", help="YAML mapping of KEY: VALUE filling only what is not known"),
]


@app.command("discover")
def discover_command(
    hwloc_xml: HwlocXmlOption = None,
    host_id: IdOption = None,
    out: OutOption = None,
    fmt: FormatOption = OutputFormat.yaml,
    sysfs_root: SysfsRootOption = Path("/"),
    sets: SetOption = None,
    defaults: DefaultsOption = None,
) -> None:
    """Write this host's Compute Host Descriptor, or one built from an hwloc XML export.

    --defaults and --set fill what the source cannot know (hypervisor, CPU flags, port speeds,
    hugepage use); provenance.notes says which facts came from where.
    """
    from ..discovery import chd_from_hwloc_xml, discover_live
    from ..models.loading import dump

    if hwloc_xml and several(hwloc_xml):
        if host_id is not None:
            raise typer.BadParameter("each export is named after its file", param_hint="--id")
        raise typer.Exit(discover_many(exports_of(hwloc_xml), out, fmt.value, lambda chd: chd))
    try:
        if hwloc_xml:
            chd = chd_from_hwloc_xml(hwloc_xml[0], host_id=host_id)
        else:
            chd = discover_live(sysfs_root=sysfs_root, host_id=host_id)
        if sets or defaults is not None:
            chd = with_facts(chd, sets or [], defaults)
        text = dump(chd, fmt.value)
    except NfvplaceError as exc:
        typer.echo(f"error [{exc.code}]: {exc}", err=True)
        raise typer.Exit(1) from None
    except Exception as exc:  # an adapter at the edge: never a traceback for the user
        typer.echo(f"error [nfvplace.discovery.failed]: unexpected failure: {exc!r}", err=True)
        raise typer.Exit(1) from None
    _write(text, out)


def _write(text: str, out: Path | None) -> None:
    """The CHD on stdout, or in `out` (exit 1 if it cannot be written)."""
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
