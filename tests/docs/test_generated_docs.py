"""The field tables and the rule list in docs/ are what docs/gen_fields.py generates."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from nfvplace.lint import ALL_RULES

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_fields", DOCS / "gen_fields.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


@pytest.mark.parametrize("page", [*GEN.PAGES, "lint-rules.md"])
def test_page_is_up_to_date(page: str) -> None:
    current = (DOCS / page).read_text(encoding="utf-8")
    assert GEN.BEGIN in current
    assert GEN.render(page, current) == current, f"docs/{page} drifted: run docs/gen_fields.py"


@pytest.mark.parametrize("page", list(GEN.PAGES))
def test_every_field_is_documented(page: str) -> None:
    root = GEN.PAGES[page]
    text = (DOCS / page).read_text(encoding="utf-8")
    for model, _ in GEN.models_in(root):
        assert f"### {model.__name__}\n" in text
        for name, info in model.model_fields.items():
            assert f"| `{info.alias or name}` |" in text, f"{model.__name__}.{name}"
            assert GEN.meaning(model, name, info)


def test_every_rule_is_documented() -> None:
    text = (DOCS / "lint-rules.md").read_text(encoding="utf-8")
    for rule in ALL_RULES:
        assert f"`{rule.id}` | {rule.severity.value} |" in text
