"""Importers from what VNF vendors already write, into nfvplace descriptors.

Each dialect module has `NAME`, `detect(data) -> bool` and `convert(data) -> Conversion`:
OpenStack flavor extra specs, OSM / ETSI SOL006 VDU guest-EPA, OpenVIM / openmano `numas`, and
ETSI SOL001 TOSCA VDUs. `nfvplace.reader` loads a file in any of them, or in our own format.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ..models.loading import kind_of
from . import openstack, openvim, osm, tosca
from .base import Conversion, DialectError, Note

DIALECTS: tuple[ModuleType, ...] = (osm, tosca, openvim, openstack)
"""In detection order: the first whose `detect` accepts a document converts it."""

DIALECT_NAMES: tuple[str, ...] = tuple(str(m.NAME) for m in DIALECTS)


def _module(data: Any) -> ModuleType | None:
    if not isinstance(data, Mapping) or kind_of(data) is not None:
        return None
    for module in DIALECTS:
        if module.detect(data):
            return module
    return None


def detect(data: Any) -> str | None:
    """The name of the dialect a document is written in, or None (ours, or unknown)."""
    module = _module(data)
    return None if module is None else str(module.NAME)


def convert(data: Any) -> Conversion:
    """Convert a dialect document to plain nfvplace data; raises DialectError."""
    module = _module(data)
    if module is None:
        raise DialectError("the document is in no dialect nfvplace reads")
    conversion = module.convert(data)
    assert isinstance(conversion, Conversion)
    return conversion


def __getattr__(name: str) -> Any:
    """`load_any` and `load_document` moved to `nfvplace.reader` (above the dialects); kept here."""
    if name in ("load_any", "load_document"):
        from .. import reader

        return reader.load_file if name == "load_any" else reader.load_document
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DIALECTS",
    "DIALECT_NAMES",
    "Conversion",
    "DialectError",
    "Note",
    "convert",
    "detect",
    "load_any",
    "load_document",
]
