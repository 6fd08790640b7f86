"""`schemas/*.json` are exactly what the models generate (regenerate with `nfvplace schemas`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nfvplace.models.jsonschema import SCHEMA_MODELS, schema_text

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


@pytest.mark.parametrize("name", list(SCHEMA_MODELS))
def test_published_schema_matches_the_models(name: str) -> None:
    published = (SCHEMAS / f"{name}.v1.json").read_text(encoding="utf-8")
    assert published == schema_text(name), f"schemas/{name}.v1.json drifted: run `nfvplace schemas`"


def test_no_stray_schema_files() -> None:
    assert {p.name for p in SCHEMAS.glob("*.json")} == {f"{n}.v1.json" for n in SCHEMA_MODELS}
