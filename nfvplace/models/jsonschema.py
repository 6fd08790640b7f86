"""JSON Schemas of the document kinds, generated from the models (published in `schemas/`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .chd import ComputeHostDescriptor
from .configuration import VmConfiguration, VmConfigurations
from .vmd import VmDescriptor
from .vnf import VnfTemplate

SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "chd": ComputeHostDescriptor,
    "vmd": VmDescriptor,
    "vnf": VnfTemplate,
    "vm-configuration": VmConfiguration,
    "vm-configurations": VmConfigurations,
}

SCHEMA_TITLES = {
    "chd": "Compute Host Descriptor",
    "vmd": "VM Descriptor",
    "vnf": "VNF template",
    "vm-configuration": "VM Configuration",
    "vm-configurations": "VM Configurations",
}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one document kind: chd, vmd, vnf or vm-configuration."""
    model = SCHEMA_MODELS[name]
    schema = model.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://nfvplace.dev/schemas/{name}.v1.json",
        **schema,
        "title": SCHEMA_TITLES[name],
    }


def schema_text(name: str) -> str:
    return json.dumps(json_schema(name), indent=2, sort_keys=True) + "\n"


def write_schemas(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in SCHEMA_MODELS:
        target = folder / f"{name}.v1.json"
        target.write_text(schema_text(name), encoding="utf-8")
        written.append(target)
    return written
