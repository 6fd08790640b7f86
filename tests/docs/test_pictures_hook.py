"""The docs' pictures are drawn from the examples by docs/pictures_hook.py, and every page that
shows one names a picture the hook draws."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from xml.etree import ElementTree

DOCS = Path(__file__).resolve().parents[2] / "docs"
SVG = "{http://www.w3.org/2000/svg}"


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pictures_hook", DOCS / "pictures_hook.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pictures_are_drawn_from_the_examples() -> None:
    pictures = _hook().pictures()
    host = ElementTree.fromstring(pictures["host-with-vran-du.svg"])
    overlaid = {
        cls
        for g in host.iter(f"{SVG}g")
        for cls in (g.get("class") or "").split()
        if cls.startswith("vm-")
    }
    assert overlaid == {"vm-0", "vm-1"}  # the DU and the figure 8 VM
    heatmap = ElementTree.fromstring(pictures["fleet-heatmap.svg"])
    assert any(g.get("class") == "cell" for g in heatmap.iter(f"{SVG}g"))
    shown = {
        name
        for page in DOCS.rglob("*.md")
        for name in re.findall(r"assets/pictures/([\w.-]+\.svg)", page.read_text(encoding="utf-8"))
    }
    assert shown
    assert shown <= set(pictures)
