"""The published OpenAPI document: FastAPI's, plus the descriptor schemas as components."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic.json_schema import models_json_schema

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate

REF = "#/components/schemas/{model}"

PROBLEM = {
    "title": "Problem",
    "description": "RFC 9457 problem details with a stable nfvplace error code",
    "type": "object",
    "required": ["type", "title", "status", "code"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"type": "string"},
        "code": {"type": "string", "description": "Stable code, see docs/errors.md"},
        "request_id": {"type": "string"},
        "diagnosis": {"type": "object", "description": "Why no host fits (no_fit)"},
        "findings": {"type": "array", "items": {"type": "object"}, "description": "Lint findings"},
        "issues": {"type": "array", "items": {"type": "object"}},
    },
}


def _descriptor_components() -> dict[str, Any]:
    _, schema = models_json_schema(
        [
            (ComputeHostDescriptor, "validation"),
            (VmDescriptor, "validation"),
            (VnfTemplate, "validation"),
            (VmConfiguration, "validation"),
        ],
        by_alias=True,
        ref_template=REF,
    )
    components: dict[str, Any] = dict(schema.get("$defs", {}))
    components["PlacementRequest"] = {
        "title": "PlacementRequest",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "vm": {"$ref": REF.format(model="VmDescriptor")},
            "vnf": {"$ref": REF.format(model="VnfTemplate")},
            "batch": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["vm"],
                    "properties": {
                        "vm": {"$ref": REF.format(model="VmDescriptor")},
                        "count": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1},
                    },
                },
            },
            "dry_run": {"type": "boolean", "default": False},
            "moves": {
                "type": "boolean",
                "default": False,
                "description": "With dry_run and vm: if it fits nowhere, moves that make room",
            },
            "policy": {"type": "string", "default": "pack"},
            "explain": {"type": "boolean", "default": False},
        },
        "oneOf": [{"required": ["vm"]}, {"required": ["vnf"]}, {"required": ["batch"]}],
    }
    components["CapacityRequest"] = {
        "title": "CapacityRequest",
        "type": "object",
        "additionalProperties": False,
        "required": ["vm"],
        "properties": {"vm": {"$ref": REF.format(model="VmDescriptor")}},
    }
    components["Descriptor"] = {
        "title": "Descriptor",
        "oneOf": [
            {"$ref": REF.format(model=name)}
            for name in ("ComputeHostDescriptor", "VmDescriptor", "VnfTemplate", "VmConfiguration")
        ],
    }
    components["Problem"] = PROBLEM
    return components


def build_openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema:
        return app.openapi_schema
    document = get_openapi(
        title=app.title,
        version=app.version,
        description=app.description,
        routes=app.routes,
    )
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in _descriptor_components().items():
        schemas.setdefault(name, schema)
    app.openapi_schema = document
    return document


def openapi_text(app: FastAPI) -> str:
    return json.dumps(app.openapi(), indent=2, sort_keys=True) + "\n"


def write_openapi(app: FastAPI, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(openapi_text(app), encoding="utf-8")
    return target
