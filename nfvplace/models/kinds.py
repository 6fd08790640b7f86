"""The kinds of nfvplace document: each `schema:` line and the model that reads it."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .. import errors
from ..errors import DescriptorError, Issue
from .chd import CHD_SCHEMA, ComputeHostDescriptor
from .configuration import (
    CONFIGURATION_SCHEMA,
    CONFIGURATIONS_SCHEMA,
    VmConfiguration,
    VmConfigurations,
)
from .vmd import VMD_SCHEMA, VmDescriptor
from .vnf import VNF_SCHEMA, VnfTemplate

Descriptor = ComputeHostDescriptor | VmDescriptor | VnfTemplate | VmConfiguration | VmConfigurations

KINDS: dict[str, type[BaseModel]] = {
    CHD_SCHEMA: ComputeHostDescriptor,
    VMD_SCHEMA: VmDescriptor,
    VNF_SCHEMA: VnfTemplate,
    CONFIGURATION_SCHEMA: VmConfiguration,
    CONFIGURATIONS_SCHEMA: VmConfigurations,
}


def kind_of(data: Any) -> str | None:
    if isinstance(data, Mapping):
        schema = data.get("schema")
        if isinstance(schema, str):
            return schema
    return None


def model_for(data: Any, source: str = "<string>") -> type[BaseModel]:
    """The model class for a document, from its `schema:` line."""
    schema = kind_of(data)
    if schema in KINDS:
        return KINDS[schema]
    known = ", ".join(KINDS)
    if not isinstance(data, Mapping):
        raise DescriptorError(
            errors.INPUT_UNKNOWN_KIND,
            "a descriptor must be a mapping",
            file=source,
            issues=(
                Issue("top level is not a mapping", hint=f"start with 'schema: {VMD_SCHEMA}'"),
            ),
        )
    if schema is None:
        raise DescriptorError(
            errors.INPUT_UNKNOWN_KIND,
            "document has no 'schema:' field",
            file=source,
            issues=(
                Issue("missing field", path="schema", hint=f"add 'schema:' naming one of {known}"),
            ),
        )
    close = difflib.get_close_matches(schema, list(KINDS), n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"use one of {known}"
    raise DescriptorError(
        errors.INPUT_UNKNOWN_KIND,
        f"unknown schema {schema!r}",
        file=source,
        issues=(Issue(f"unknown schema {schema!r}", path="schema", hint=hint),),
    )
