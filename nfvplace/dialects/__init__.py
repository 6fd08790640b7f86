"""Importers from what VNF vendors already write, into nfvplace descriptors.

Each dialect module has `NAME`, `detect(data) -> bool` and `convert(data) -> Conversion`:
`openstack` (Nova flavors), `heat` (HOT with `OS::Nova::Flavor`), `tacker` (TOSCA-NFV), `tosca`
(ETSI SOL001), `osm` (OSM IM and ETSI SOL006; `sol006_xml` parses SOL006 XML), `openvim` (OpenVIM
and openmano `numas`) and `openvim_host` (OpenVIM host files, as CHDs). `writers` writes a VM
Descriptor back out. `convert` adds a note for every `${...}` placeholder. `nfvplace.reader` loads
a file in any of them, or in nfvplace's own format.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from types import ModuleType
from typing import Any

from ..models.loading import kind_of
from .base import MISSING, Conversion, DialectError, Note, placeholder_paths

_MODULES = (
    "osm",
    "tacker",
    "tosca",
    "heat",
    "openvim_host",
    "openvim",
    "openstack",
    "k8s_nrt",
    "k8s_pod",
    "kubevirt",
)
"""In detection order: the first whose `detect` accepts a document converts it. Imported on first
use (`DIALECTS`): a file in nfvplace's own format never needs them, and `nfvplace lint FILE` in a
pre-commit hook should not pay for them."""

DIALECT_NAMES: tuple[str, ...] = (
    "osm-sol006",
    "tacker-tosca-nfv",
    "sol001-tosca",
    "heat",
    "openvim-host",
    "openvim",
    "openstack-flavor",
    "kubernetes-nrt",
    "kubernetes-pod",
    "kubevirt-vmi",
)
"""Each dialect module's `NAME`, in the same order (a test keeps them equal)."""


@cache
def _dialects() -> tuple[ModuleType, ...]:
    return tuple(importlib.import_module(f".{name}", __name__) for name in _MODULES)


def _module(data: Any) -> ModuleType | None:
    if not isinstance(data, Mapping) or kind_of(data) is not None:
        return None
    for module in _dialects():
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
    unique = tuple(dict.fromkeys(conversion.notes))  # a shared compute desc is noted once
    conversion = replace(conversion, notes=unique)
    noted = {note.path for note in conversion.notes}
    placeholders = tuple(
        Note(path, "'${...}' placeholder: the value is not given yet", MISSING)
        for path in placeholder_paths(data)
        if path not in noted
    )
    if placeholders:
        conversion = replace(conversion, notes=conversion.notes + placeholders)
    return conversion


def __getattr__(name: str) -> Any:
    """`DIALECTS`: the modules, imported on first use. (A file in any dialect is read by
    `nfvplace.reader`, above the dialects.)"""
    if name == "DIALECTS":
        return _dialects()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DIALECTS",
    "DIALECT_NAMES",
    "Conversion",
    "DialectError",
    "Note",
    "convert",
    "detect",
]
