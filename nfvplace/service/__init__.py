"""The placement REST API (FastAPI): routers over the store and the placement engine."""

from .app import create_app
from .settings import Settings, SettingsError

__all__ = ["Settings", "SettingsError", "create_app"]
