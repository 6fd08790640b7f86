"""The placement REST API (FastAPI): routers over the store and the placement engine.

The app is imported when first asked for: `nfvplace.service.client` (used by the command line and
host agents) does not load FastAPI, the store and the engine with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app
    from .settings import Settings, SettingsError

__all__ = ["Settings", "SettingsError", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    if name in ("Settings", "SettingsError"):
        from . import settings

        return getattr(settings, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
