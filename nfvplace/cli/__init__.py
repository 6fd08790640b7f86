"""The `nfvplace` command line: thin typer commands over the library.

Each command lives in its own module and registers itself on `app` (`cli/application.py`);
`_register` imports them, on first use, so that importing the package stays cheap.
"""

from __future__ import annotations

import os

from .application import app


def _register() -> None:
    # Imported for their side effect of adding commands to `app`.
    from . import (  # noqa: F401
        agent,
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


__all__ = ["app", "main"]
