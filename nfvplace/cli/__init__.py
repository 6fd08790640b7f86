"""The `nfvplace` command line: thin typer commands over the library.

Each command lives in its own module and registers itself on `app`.
"""

from __future__ import annotations

import os

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


def _register() -> None:
    # Imported for their side effect of adding commands to `app`.
    from . import (  # noqa: F401
        capacity,
        convert,
        discover,
        hosts,
        lint,
        openapi,
        place,
        render,
        schemas,
        serve,
        show,
        simulate,
    )


def main() -> None:
    # pydantic looks for plugins by scanning the entry points of every installed distribution when
    # the first validator is built: 20-30 ms of each `nfvplace lint FILE`, for plugins nfvplace does
    # not use. PYDANTIC_DISABLE_PLUGINS set to anything (even empty) keeps the caller's choice.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    _register()
    app()
