"""Schema findings: pydantic validation errors and unit spellings, located in the source."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ..models.loading import PathKey, SourceDocument, error_location, validation_issues
from ..models.units import uses_decimal_memory_unit
from .findings import Hit
from .rules import capabilities, document, pci

PCI_FIELDS = frozenset({"pci_address", "physical_function"})
MEMORY_KEYS = frozenset({"size", "memory", "total", "ram"})


def validate(model: type[BaseModel], data: Any) -> tuple[BaseModel | None, list[Hit]]:
    """The model, or the schema hits that explain why the data is not one."""
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        return None, list(schema_hits(exc, model, data))


def schema_hits(exc: ValidationError, model: type[BaseModel], data: Any) -> Iterator[Hit]:
    issues = validation_issues(exc, model, SourceDocument(data=data, source=""))
    for err, issue in zip(exc.errors(include_url=False), issues, strict=True):
        loc: PathKey = error_location(err["loc"], data)
        last = loc[-1] if loc else None
        given = err.get("input")
        if err["type"] == "string_pattern_mismatch" and last in PCI_FIELDS:
            yield pci.MALFORMED.hit(loc, f"'{given}' is not a PCI address (DDDD:BB:DD.F)")
        elif err["type"] == "enum" and any(
            isinstance(p, str) and p in capabilities.CAPABILITY_FIELDS for p in loc
        ):
            yield capabilities.UNKNOWN_NAME.hit(
                loc, f"unknown name '{given}'", issue.hint or capabilities.UNKNOWN_NAME.fix
            )
        else:
            yield document.SCHEMA.hit(loc, issue.message, issue.hint or document.SCHEMA.fix)


def _memory_key(key: str) -> bool:
    return key.endswith(("_mib", "_kib", "_gib")) or key in MEMORY_KEYS


def decimal_unit_hits(data: Any, path: PathKey = ()) -> Iterator[Hit]:
    """NFV002 for every memory quantity spelled with a decimal unit (`10GB` read as 10 GiB)."""
    if spells_decimal_unit(data):  # else no hit: the walk below builds a path per node
        yield from _decimal_unit_hits(data, path)


def spells_decimal_unit(data: Any) -> bool:
    """Whether `decimal_unit_hits` finds anything in `data`: the same nodes looked at, a level at
    a time, with no path built and scalars passed over by their type (the gate asks this of every
    request's descriptor, which almost never spells one: about 18 us on the service mix's bodies,
    where the walk took 31)."""
    level = [data]
    while level:
        below: list[Any] = []
        for item in level:
            if type(item) is dict or isinstance(item, Mapping):
                for key, value in item.items():
                    if isinstance(key, str):
                        if _memory_key(key) and uses_decimal_memory_unit(value):
                            return True
                    elif not isinstance(key, int):
                        continue
                    if type(value) not in _SCALARS:
                        below.append(value)
            elif isinstance(item, list):
                below.extend(v for v in item if type(v) not in _SCALARS)
        level = below
    return False


_SCALARS = frozenset({str, int, float, bool, type(None)})  # what the walk never goes into


def _decimal_unit_hits(data: Any, path: PathKey) -> Iterator[Hit]:
    if isinstance(data, Mapping):
        for key, value in data.items():
            if not isinstance(key, str | int):
                continue
            child = (*path, key)
            if isinstance(key, str) and _memory_key(key) and uses_decimal_memory_unit(value):
                binary = str(value).strip()[:-1].rstrip() + "iB"
                binary = binary[:-3] + binary[-3].upper() + "iB" if len(binary) >= 3 else binary
                yield document.DECIMAL_MEMORY_UNIT.hit(
                    child,
                    f"'{value}' is read as {binary} (binary), as NFV-PER 001 writes it",
                    f"write '{binary}' to say what you mean",
                )
            else:
                yield from _decimal_unit_hits(value, child)
    elif isinstance(data, list):
        for index, item in enumerate(data):
            yield from _decimal_unit_hits(item, (*path, index))
