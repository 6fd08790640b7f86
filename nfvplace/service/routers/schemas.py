"""`GET /v1/schemas/{name}`: the JSON Schema of a document kind."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from ... import errors
from ...models.jsonschema import SCHEMA_MODELS, json_schema
from ..auth import require
from ..problems import ProblemError
from .common import problems

router = APIRouter(prefix="/v1/schemas", tags=["schemas"])


@router.get(
    "/{name}",
    dependencies=[Depends(require("reader"))],
    responses={
        200: {"description": "A JSON Schema (draft 2020-12)", "content": {"application/json": {}}},
        **problems(401, 403, 404),
    },
)
def get_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of `chd`, `vmd`, `vnf` or `vm-configuration`."""
    base = name.removesuffix(".json").removesuffix(".v1")
    if base not in SCHEMA_MODELS:
        raise ProblemError(
            404,
            errors.SERVICE_NOT_FOUND,
            f"no schema {name!r}; use one of {sorted(SCHEMA_MODELS)}",
        )
    return json_schema(base)
