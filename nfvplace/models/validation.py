"""pydantic's validation errors as issues a user can act on: the field's path in the document,
its line, and a "did you mean" hint."""

from __future__ import annotations

import difflib
import re
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import Issue
from .source import PathKey, SourceDocument, format_path


def _field_names(model: type[BaseModel]) -> list[str]:
    names = []
    for name, info in model.model_fields.items():
        names.append(info.alias or name)
    return names


def _model_at(model: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """Follow a validation location through nested models to the model that holds its last key."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int) or not (
            isinstance(current, type) and issubclass(current, BaseModel)
        ):
            continue
        info = next((f for n, f in current.model_fields.items() if part in (n, f.alias)), None)
        if info is None:
            return None
        current = info.annotation
        # unwrap Optional / tuple[...] / dict[...]
        for _ in range(4):
            args = [
                a for a in typing.get_args(current) if a is not type(None) and a is not Ellipsis
            ]
            models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
            if models:
                current = models[0]
                break
            if args:
                current = args[-1]
            else:
                break
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    return None


_PYDANTIC_TAG = re.compile(r"^(\[key\]|[a-z][a-z0-9_-]*\[.+\])$")
"""Union and validator tags pydantic adds to error locations, e.g. `function-after[f(), M]`."""


_NO_DATA = object()


def error_location(raw: Sequence[Any], data: Any = _NO_DATA) -> PathKey:
    """A pydantic error location as a path into the document, without pydantic's own tags.

    With the document's data, a step is kept when it exists there (so a user's key such as
    `a[b]` survives); without it, steps that look like tags are dropped.
    """
    out: list[str | int] = []
    node = data
    for step in raw:
        if not isinstance(step, str | int):
            continue
        in_mapping = isinstance(node, Mapping) and step in node
        in_list = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        if in_mapping or in_list:
            out.append(step)
            node = node[step]
        elif isinstance(step, str) and _PYDANTIC_TAG.match(step):
            continue
        else:
            out.append(step)
            node = _NO_DATA
    return tuple(out)


def validation_issues(
    exc: ValidationError, model: type[BaseModel], document: SourceDocument | None = None
) -> tuple[Issue, ...]:
    """Readable issues from a pydantic ValidationError, with lines and 'did you mean' hints."""
    issues = []
    for err in exc.errors(include_url=False):
        # pydantic adds union/validator tags such as 'function-after[...]' to locations
        loc = error_location(err["loc"], document.data if document else _NO_DATA)
        path = format_path(loc)
        line = document.line_of(loc) if document else None
        message = err["msg"]
        hint: str | None = None
        if err["type"] == "extra_forbidden":
            holder = _model_at(model, loc)
            candidates = _field_names(holder) if holder else []
            name = str(loc[-1]) if loc else ""
            close = difflib.get_close_matches(name, candidates, n=1)
            message = f"unknown field '{name}'"
            hint = f"did you mean '{close[0]}'?" if close else "remove it"
        elif err["type"] == "enum":
            expected = err.get("ctx", {}).get("expected", "")
            given = str(err.get("input"))
            options = [o.strip(" '") for o in expected.replace(" or ", ",").split(",") if o.strip()]
            close = difflib.get_close_matches(given, options, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"use one of {expected}"
        elif err["type"] == "missing":
            message = f"required field '{loc[-1]}' is missing" if loc else message
            hint = "add it"
        elif err["type"] == "literal_error":
            hint = f"use {err.get('ctx', {}).get('expected', '')}"
        elif message.startswith("Value error, "):
            message = message.removeprefix("Value error, ")
        issues.append(Issue(message=message, path=path, line=line, hint=hint))
    return tuple(issues)
