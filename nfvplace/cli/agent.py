"""`nfvplace agent`: keep this host's CHD current in a service (the host-agent role)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .application import app

if TYPE_CHECKING:
    from ..models.chd import ComputeHostDescriptor


ServerOption = Annotated[
    str, typer.Option("--server", help="The service's URL, e.g. http://nfvplace:8080")
]
TokenFileOption = Annotated[
    Path,
    typer.Option("--token-file", help="File holding a bearer token of the host-agent role"),
]
IntervalOption = Annotated[
    float, typer.Option("--interval", min=1.0, help="Seconds between two reports")
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="KEY=VALUE a fact discovery cannot know (as discover)",
        metavar="KEY=VALUE",
    ),
]
DefaultsOption = Annotated[
    Path | None,
    typer.Option("--defaults", help="YAML mapping of KEY: VALUE filling what is not known"),
]
IdOption = Annotated[str | None, typer.Option("--id", help="Host id (default: hostname)")]
LibvirtXmlOption = Annotated[
    Path | None,
    typer.Option(
        "--libvirt-xml",
        help="Read the running domains from this folder of domain XML files, not from libvirt",
    ),
]
MetricsFileOption = Annotated[
    Path | None,
    typer.Option("--metrics-file", help="Write the drift metric here (Prometheus text format)"),
]
SysfsRootOption = Annotated[
    Path, typer.Option("--sysfs-root", help="Read sysfs/procfs under this root")
]
OnceOption = Annotated[bool, typer.Option("--once", help="Report once and exit (1 if it failed)")]


@app.command("agent")
def agent_command(
    server: ServerOption,
    token_file: TokenFileOption,
    interval: IntervalOption = 60.0,
    sets: SetOption = None,
    defaults: DefaultsOption = None,
    host_id: IdOption = None,
    libvirt_xml: LibvirtXmlOption = None,
    metrics_file: MetricsFileOption = None,
    sysfs_root: SysfsRootOption = Path("/"),
    once: OnceOption = False,
) -> None:
    """Keep this host's CHD current in a service: discover, report drift against libvirt's running
    domains, and PUT it every --interval seconds (the service keeps its claims). Exits 0 on
    SIGTERM."""
    from ..agent.run import AgentSettings, run
    from ..discovery import discover_live
    from ..errors import NfvplaceError
    from ..redaction import read_token
    from .common import fail
    from .discover import with_facts

    try:
        read_token(token_file)  # refused here, once, without echoing the file
    except NfvplaceError as exc:
        raise fail(exc) from None
    if not server.startswith(("http://", "https://")):
        raise typer.BadParameter("give an http:// or https:// URL", param_hint="--server")

    def discover() -> ComputeHostDescriptor:
        chd = discover_live(sysfs_root=sysfs_root, host_id=host_id)
        return with_facts(chd, sets or [], defaults) if sets or defaults else chd

    def log(line: str) -> None:
        typer.echo(f"nfvplace agent: {line}", err=True)

    settings = AgentSettings(
        server, token_file, interval, discover, libvirt_xml, metrics_file, once, log
    )
    raise typer.Exit(run(settings))
