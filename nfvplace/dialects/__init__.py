"""Importers from what VNF vendors already write, into nfvplace descriptors.

Each dialect module has `NAME`, `detect(data) -> bool` and `convert(data) -> Conversion`:
OpenStack flavor extra specs, OSM / ETSI SOL006 VDU guest-EPA, OpenVIM / openmano `numas`, and
ETSI SOL001 TOSCA VDUs. `load_any(path)` loads a file in any of them, or in our own format.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import errors
from ..errors import DescriptorError, Issue
from ..models.loading import Descriptor, SourceDocument, format_path, kind_of, read_document
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


def load_document(document: SourceDocument) -> Descriptor:
    """A typed descriptor from a parsed document in our format or any dialect."""
    from ..models.loading import parse_document

    if kind_of(document.data) is not None or _module(document.data) is None:
        return parse_document(document)
    try:
        conversion = convert(document.data)
    except DialectError as exc:
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"cannot convert from {detect(document.data)}",
            file=document.source,
            issues=(
                Issue(
                    str(exc),
                    path=format_path(exc.path),
                    line=document.line_of(exc.path),
                    hint="fix the field, or write the descriptor in nfvplace/vmd/v1",
                ),
            ),
        ) from exc
    converted = SourceDocument(data=conversion.data, source=document.source)
    return parse_document(converted)


def load_any(path: str | Path) -> Descriptor:
    """Load one file written in our format or in any supported dialect."""
    return load_document(read_document(path))


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
