"""The published OpenAPI document: FastAPI's, plus the descriptor schemas as components."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic.json_schema import models_json_schema

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from .requests import CapacityRequestBody, PlacementRequestBody

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


RENAMED = {
    "lint": "lintDescriptor",
    "healthz": "getHealth",
    "readyz": "getReadiness",
    "metrics": "getMetrics",
}
"""Operation ids that are not simply the route function's name in camelCase."""


def operation_id(route: APIRoute) -> str:
    """A short, stable operationId: `create_placement` -> `createPlacement`.

    Generated clients name their functions after it; `tests/service/test_service_openapi.py`
    pins the published ids, so renaming a route function cannot silently rename the API.
    """
    name = RENAMED.get(route.name, route.name)
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _descriptor_components() -> dict[str, Any]:
    _, schema = models_json_schema(
        [
            (ComputeHostDescriptor, "validation"),
            (VmDescriptor, "validation"),
            (VnfTemplate, "validation"),
            (VmConfiguration, "validation"),
            (PlacementRequestBody, "validation"),
            (CapacityRequestBody, "validation"),
        ],
        by_alias=True,
        ref_template=REF,
    )
    components: dict[str, Any] = dict(schema.get("$defs", {}))
    components["PlacementRequest"] = components.pop("PlacementRequestBody")
    components["CapacityRequest"] = components.pop("CapacityRequestBody")
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
    _problem_422s(document)
    app.openapi_schema = document
    return document


def _problem_422s(document: dict[str, Any]) -> None:
    """Every 422 is a problem document (FastAPI's default declares its own validation body)."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.get("responses", {})
            if "422" in responses:
                responses["422"] = {
                    "description": "Invalid input: a problem document with findings",
                    "content": {
                        "application/problem+json": {
                            "schema": {"$ref": REF.format(model="Problem")}
                        }
                    },
                }
    schemas = document.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)


def openapi_text(app: FastAPI) -> str:
    return json.dumps(app.openapi(), indent=2, sort_keys=True) + "\n"


def write_openapi(app: FastAPI, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(openapi_text(app), encoding="utf-8")
    return target
