"""`nfvplace schemas`: write the JSON Schemas of every document kind."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .application import app


@app.command("schemas")
def schemas_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write into")] = Path(
        "schemas"
    ),
) -> None:
    """Write the JSON Schema of each document kind (chd, vmd, vnf, vm-configuration)."""
    from ..models.jsonschema import write_schemas

    for path in write_schemas(out):
        typer.echo(str(path))
