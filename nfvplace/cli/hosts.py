"""`nfvplace hosts push`: register a folder of hosts with a running `nfvplace serve`.

Each file (a CHD, or a host in a dialect such as OpenVIM's) is read and checked here, then sent
with `PUT /v1/hosts/{id}` through `nfvplace.service.client`, a few at a time. One line per host on
stdout (created or replaced, its generation, conflicts); a file that cannot be read or that the
server refuses is one error line on stderr, and the others go on. Exit 0 when every host was
registered, 1 otherwise.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .application import app
from .common import fail

if TYPE_CHECKING:
    from ..service.client import Client, Reply

hosts_app = typer.Typer(
    help="Hosts of a running nfvplace serve (see docs/service.md).", no_args_is_help=True
)
app.add_typer(hosts_app, name="hosts")

PARALLEL = 4


@hosts_app.command("push")
def push_command(
    paths: Annotated[list[Path], typer.Argument(help="CHD files or folders of them")],
    server: Annotated[
        str, typer.Option("--server", help="The service's URL, e.g. http://127.0.0.1:8080")
    ],
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="A file holding a host-agent (or admin) token; default: $NFVPLACE_TOKEN",
        ),
    ] = None,
) -> None:
    """Register (or replace) every host in PATHS with the service: PUT /v1/hosts/{id}."""
    from ..errors import NfvplaceError
    from ..service.client import Client, token_from
    from .inputs import host_files

    try:
        client = Client(server, token_from(token_file))
    except NfvplaceError as exc:
        raise fail(exc) from None
    files = list(host_files(paths))
    if not files:
        typer.echo(f"error: no host files in {', '.join(map(str, paths))}", err=True)
        raise typer.Exit(2)
    with ThreadPoolExecutor(PARALLEL) as pool:
        outcomes = list(pool.map(lambda path: _push(client, path), files))
    failed = outcomes.count(False)
    typer.echo(f"{len(files) - failed} of {len(files)} hosts registered", err=True)
    raise typer.Exit(1 if failed else 0)


def _push(client: Client, path: Path) -> bool:
    """Send one file; print what happened. False when it was not registered."""
    from ..errors import NfvplaceError
    from ..models.chd import ComputeHostDescriptor
    from ..reader import load_file

    try:
        chd = load_file(path)
        if not isinstance(chd, ComputeHostDescriptor):
            typer.echo(
                f"error [nfvplace.input.unknown_kind]: {path}: a {type(chd).__name__}, not a host",
                err=True,
            )
            return False
        reply = client.put_host(chd)
    except NfvplaceError as exc:
        typer.echo(f"error [{exc.code}]: {exc if exc.file else f'{path}: {exc}'}", err=True)
        return False
    if not reply.ok:
        typer.echo(f"error {reply.problem} ({path}, host {chd.id}){_findings(reply)}", err=True)
        return False
    body = reply.body if isinstance(reply.body, dict) else {}
    conflicts = body.get("conflicts") or []
    what = "created" if reply.status == 201 else "replaced"
    line = f"{chd.id}: {what}, generation {body.get('generation')}"
    if conflicts:
        line += f"; {len(conflicts)} placement(s) no longer fit: " + "; ".join(
            f"{c['placement']} {c['path']}: {c['message']}" for c in conflicts
        )
    typer.echo(line)
    return True


def _findings(reply: Reply) -> str:
    findings = reply.body.get("findings", []) if isinstance(reply.body, dict) else []
    return "".join(
        f"\n  {f.get('rule', '')} {f.get('path', '')}: {f.get('message', '')}" for f in findings
    )
