"""The Typer application every command of the `nfvplace` command line registers on.

Command modules import `app` from here and add themselves with `@app.command`; the package
(`nfvplace.cli`) imports the command modules, never the reverse.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="nfvplace",
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Place NFV VMs on compute hosts: NUMA, SMT, hugepages and SR-IOV aware (ETSI NFV-PER 001).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: rich would add a tenth of a second to every start-up
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"nfvplace {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit"
    ),
) -> None:
    """Place NFV VMs on compute hosts: NUMA, SMT, hugepages and SR-IOV aware (ETSI NFV-PER 001)."""
