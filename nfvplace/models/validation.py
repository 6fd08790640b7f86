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
        message, hint = plain(err, _model_at(model, (*loc, "")))
        if err["type"] == "extra_forbidden":
            holder = _model_at(model, loc)
            candidates = _field_names(holder) if holder else []
            name = str(loc[-1]) if loc else ""
            close = difflib.get_close_matches(name, candidates, n=1)
            message = f"unknown field '{name}'"
            hint = f"did you mean '{close[0]}'?" if close else "remove it"
        elif err["type"] == "enum":
            expected = _ctx(err).get("expected", "")
            given = str(err.get("input"))
            options = [o.strip(" '") for o in expected.replace(" or ", ",").split(",") if o.strip()]
            close = difflib.get_close_matches(given, options, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"use one of {expected}"
        elif err["type"] == "missing":
            message = f"required field '{loc[-1]}' is missing" if loc else message
            hint = "add it"
        issues.append(Issue(message=message, path=path, line=line, hint=hint))
    return tuple(issues)


# What pydantic's error types ask for, in words (its `int_parsing`, `model_type`, ... without the
# suffix): nfvplace says what the field must be, what it got, and how to fix it, in its own words
_KINDS = {
    "int": "a whole number",
    "float": "a number",
    "decimal": "a number",
    "bool": "true or false",
    "string": "text",
    "bytes": "text",
    "list": "a list",
    "tuple": "a list",
    "set": "a list",
    "frozen_set": "a list",
    "dict": "a mapping (key: value lines)",
    "model": "a mapping (key: value lines)",
    "model_attributes": "a mapping (key: value lines)",
    "dataclass": "a mapping (key: value lines)",
}
_BOUNDS = {
    "greater_than_equal": ("ge", "at least"),
    "greater_than": ("gt", "more than"),
    "less_than_equal": ("le", "at most"),
    "less_than": ("lt", "less than"),
}


def _ctx(err: Any) -> dict[str, Any]:
    return dict(err.get("ctx") or {})


def _given(value: Any) -> str:
    text = repr(value) if not isinstance(value, dict | list | tuple) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def plain(err: Any, holder: type[BaseModel] | None = None) -> tuple[str, str | None]:
    """One pydantic error as nfvplace's message and fix (never the validation library's words).
    `holder` is the model the field itself is, when it is one (its fields make the fix)."""
    kind, ctx, given = str(err["type"]), _ctx(err), _given(err.get("input"))
    base = kind.removesuffix("_type").removesuffix("_parsing")
    if kind in ("too_short", "too_long"):
        has = ctx.get("actual_length")
        if kind == "too_short":
            least = ctx.get("min_length")
            return f"needs at least {least} item(s), has {has}", f"give at least {least}"
        most = ctx.get("max_length")
        return f"has {has} items, more than the {most} allowed", f"give at most {most}"
    if kind == "int_from_float":
        return f"must be a whole number, not {given}", "drop the fraction"
    if kind in _BOUNDS:
        key, words = _BOUNDS[kind]
        return f"must be {words} {ctx.get(key)}, not {given}", f"use a value {words} {ctx.get(key)}"
    if kind in ("enum", "literal_error"):
        expected = ctx.get("expected", "")
        return f"must be {expected}, not {given}", f"use {expected}"
    if kind == "string_pattern_mismatch":
        return (
            f"{given} is not of the form this field takes (pattern {ctx.get('pattern')})",
            "see the field's description: nfvplace schemas writes them",
        )
    if base in _KINDS and kind != base:
        fix = f"write {_KINDS[base]}"
        if holder is not None:
            fix = f"give its fields as key: value lines ({', '.join(_field_names(holder)[:6])})"
        return f"must be {_KINDS[base]}, not {given}", fix
    message = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    for theirs, ours in (("Input should be", "must be"), ("String should", "must")):
        message = message.replace(theirs, ours)
    return message, None
