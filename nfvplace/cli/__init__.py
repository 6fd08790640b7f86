"""The `nfvplace` command line: thin typer commands over the library.

Each command lives in its own module and registers itself on `app`.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="nfvplace",
    help="Place NFV VMs on compute hosts: NUMA, SMT, hugepages and SR-IOV aware (ETSI NFV-PER 001).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Place NFV VMs on compute hosts: NUMA, SMT, hugepages and SR-IOV aware (ETSI NFV-PER 001)."""


def _register() -> None:
    # Imported for their side effect of adding commands to `app`.
    from . import (  # noqa: F401
        capacity,
        discover,
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
    _register()
    app()
