"""`nfvplace openapi`: write the REST API's OpenAPI document."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .application import app


@app.command("openapi")
def openapi_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write")] = Path(
        "api/openapi.json"
    ),
) -> None:
    """Write the OpenAPI document of `nfvplace serve` (published as api/openapi.json)."""
    from ..service.app import create_app
    from ..service.openapi import write_openapi
    from ..service.settings import Settings

    application = create_app(Settings(no_auth=True, db_url="sqlite://"))
    typer.echo(str(write_openapi(application, out)))
