"""Core objects borrow their notebook pictures and graph from above (`nfvplace.hooks`), and the
layers below `visual` import nothing above them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from nfvplace import hooks

PACKAGE = Path(__file__).resolve().parents[1] / "nfvplace"

# What each low layer may not import (statically, anywhere in the module, functions included).
ABOVE = (
    "nfvplace.visual",
    "nfvplace.notebook",
    "nfvplace.topology_graph",
    "nfvplace.cli",
    "nfvplace.service",
    "nfvplace.store",
)
LOW = ("models", "lint", "placement", "errors.py", "hooks.py", "claims.py")


def _imports(path: Path) -> set[str]:
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = module.split(".")
            if node.level:
                base = base[: len(base) - node.level + (path.name == "__init__.py")]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names |= {target, *(f"{target}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return names


@pytest.mark.parametrize("layer", LOW)
def test_low_layers_import_nothing_above_them(layer: str) -> None:
    files = [PACKAGE / layer] if layer.endswith(".py") else sorted((PACKAGE / layer).rglob("*.py"))
    wrong = {
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in files
        for name in _imports(path)
        if name.startswith(ABOVE)
    }
    assert not wrong


def test_a_fresh_process_draws_a_host_without_importing_visual_first() -> None:
    code = (
        "import sys\n"
        "from nfvplace.models.loading import parse_own_file\n"
        "host = parse_own_file('examples/hosts/dell-r740-2s-gold-6230-snc2.yaml')\n"
        "assert 'nfvplace.visual' not in sys.modules\n"
        "print(host._repr_svg_()[:4], host.to_networkx().number_of_nodes() > 0)\n"
    )
    root = PACKAGE.parent
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["<svg", "True"]


def test_a_name_nobody_lends_is_a_clear_error() -> None:
    with pytest.raises(LookupError, match="nothing lends 'no_such_picture'"):
        hooks.lent("no_such_picture")
