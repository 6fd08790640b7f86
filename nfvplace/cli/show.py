"""`nfvplace show`: draw a host with the VMs placed on it, or a fleet heatmap, as SVG or PNG.

    nfvplace show HOST_FILE [--config CONFIG ...] [-o OUT.svg|OUT.png]
    nfvplace show --hosts PATH --id ID [--config CONFIG ...] [-o OUT]
    nfvplace show --hosts PATH --heatmap [-o OUT]

The format follows the suffix of `-o`; without `-o` the SVG goes to stdout. Exit codes: 0 drawn,
1 invalid input (the error with its code, file and field on stderr), 2 usage.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import errors
from ..errors import DescriptorError, Issue, NfvplaceError
from .application import app

if TYPE_CHECKING:  # imported in the functions, so that `nfvplace --help` stays quick
    from ..models.chd import ComputeHostDescriptor
    from ..models.configuration import VmConfiguration

SUFFIXES = (".svg", ".png")


def _fail(error: NfvplaceError) -> typer.Exit:
    typer.echo(f"error [{error.code}]: {error}", err=True)
    return typer.Exit(1)


def _configs(paths: list[Path]) -> list[tuple[VmConfiguration, bool]]:
    """Each configuration, and whether it came from a vm-configurations document (a VNF or batch,
    whose members may sit on other hosts: those are left out of a host's picture)."""
    from ..models.configuration import VmConfiguration, VmConfigurations
    from ..reader import load

    configs: list[tuple[VmConfiguration, bool]] = []
    for path in paths:
        loaded = load(path)
        for item in loaded if isinstance(loaded, list) else [loaded]:
            if isinstance(item, VmConfigurations):
                configs.extend((config, True) for config in item.configurations)
                continue
            if not isinstance(item, VmConfiguration):
                raise DescriptorError(
                    errors.INPUT_UNKNOWN_KIND,
                    f"expected VM Configurations, found a {type(item).__name__}",
                    file=str(path),
                    issues=(
                        Issue(
                            "not a VM Configuration",
                            path="schema",
                            hint="give files with schema: nfvplace/vm-configuration/v1 or "
                            "nfvplace/vm-configurations/v1 (what nfvplace place prints)",
                        ),
                    ),
                )
            configs.append((item, False))
    return configs


def _pick(hosts: list[ComputeHostDescriptor], host_id: str, where: str) -> ComputeHostDescriptor:
    for host in hosts:
        if host.id == host_id:
            return host
    known = ", ".join(h.id for h in hosts[:8]) + (", ..." if len(hosts) > 8 else "")
    raise NfvplaceError(
        errors.INPUT_REFERENCE,
        f"no host {host_id!r} in {where}",
        issues=(Issue(f"give one of: {known}", path="--id"),),
    )


def _picture(
    host_file: Path | None,
    hosts: list[Path],
    host_id: str | None,
    heatmap: bool,
    configs: list[Path],
) -> str:
    from ..visual import heatmap_svg, host_svg
    from .inputs import load_hosts

    if host_file is not None:
        fleet = load_hosts([host_file])
        if len(fleet) > 1 and host_id is None:
            raise typer.BadParameter(
                f"{host_file} holds {len(fleet)} hosts: add --id", param_hint="HOST_FILE"
            )
        where = str(host_file)
    else:
        fleet = load_hosts(hosts)
        where = ", ".join(str(p) for p in hosts)
    if heatmap:
        return heatmap_svg(fleet, title=where)
    host = _pick(fleet, host_id, where) if host_id is not None else fleet[0]
    placed = [c for c, several in _configs(configs) if not several or c.host == host.id]
    return host_svg(host, placed)


@app.command("show")
def show_command(
    host_file: Annotated[
        Path | None, typer.Argument(help="A CHD file (or use --hosts)", show_default=False)
    ] = None,
    hosts: Annotated[
        list[Path] | None,
        typer.Option("--hosts", help="CHD files or folders: a fleet (with --id or --heatmap)"),
    ] = None,
    host_id: Annotated[
        str | None, typer.Option("--id", help="The host of the fleet to draw")
    ] = None,
    heatmap: Annotated[
        bool, typer.Option("--heatmap", help="Draw the fleet's free resources per NUMA node")
    ] = False,
    config: Annotated[
        list[Path] | None,
        typer.Option("--config", help="VM Configurations placed on the host (repeat)"),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write OUT.svg or OUT.png (default: SVG on stdout)"),
    ] = None,
) -> None:
    """Draw a host (packages, NUMA nodes, cores, hugepages, NICs, VFs) with its VMs, or a fleet heatmap."""
    if (host_file is None) == (not hosts):
        raise typer.BadParameter("give a HOST_FILE or --hosts PATH (not both)")
    if heatmap and (host_file is not None or host_id or config):
        raise typer.BadParameter(
            "--heatmap draws a fleet: give --hosts only", param_hint="--heatmap"
        )
    if hosts and not heatmap and host_id is None:
        raise typer.BadParameter(
            "with --hosts, give --id ID (one host) or --heatmap", param_hint="--hosts"
        )
    if out is not None and out.suffix.lower() not in SUFFIXES:
        raise typer.BadParameter(f"{out}: the suffix must be .svg or .png", param_hint="-o")
    try:
        svg = _picture(host_file, list(hosts or []), host_id, heatmap, list(config or []))
        if out is None:
            sys.stdout.write(svg)
            return
        if out.suffix.lower() == ".png":
            from ..visual import to_png

            out.write_bytes(to_png(svg))
        else:
            out.write_text(svg, encoding="utf-8")
    except NfvplaceError as error:
        raise _fail(error) from None
    except OSError as error:
        raise _fail(
            NfvplaceError(errors.INPUT_UNREADABLE, f"cannot write {out}: {error.strerror or error}")
        ) from None
    typer.echo(f"wrote {out}", err=True)
