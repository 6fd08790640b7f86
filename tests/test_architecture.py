"""The package's shape (docs/architecture.md): no import cycle, and the size limits.

The import graph counts every import, at module level, inside functions and under TYPE_CHECKING. A
second graph adds what Python does implicitly: importing `a.b.c` imports the packages `a` and `a.b`
first, so a package whose `__init__` imports its own modules must not be reached back from outside
it while it loads.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "nfvplace"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
FUNCTION_UNLIMITED = ("nfvplace.store.migrations",)  # a migration is one schema step, read whole
GENERATED = frozenset[str]()  # modules exempt from the module limit (generated tables)


@cache
def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _targets(name: str, path: Path, node: ast.ImportFrom) -> Iterator[str]:
    mods = modules()
    if node.level:
        base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
    yield from subs
    if len(subs) < len(node.names) and target in mods:
        yield target


def _module_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """The statements that run when the module loads (not in functions or classes' methods, not
    under `if TYPE_CHECKING`)."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        yield node
        if isinstance(node, ast.If | ast.Try | ast.With | ast.ClassDef):
            for field in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, field, []):
                    pending.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])


def _edges(eager: bool) -> dict[str, set[str]]:
    mods = modules()
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        tree = ast.parse(path.read_text())
        for node in _module_level(tree) if eager else ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                edges[name].update(t for t in _targets(name, path, node) if t != name)
            elif isinstance(node, ast.Import):
                edges[name].update(a.name for a in node.names if a.name in mods and a.name != name)
    return edges


@cache
def imports() -> dict[str, set[str]]:
    """Every import, wherever it is."""
    return _edges(eager=False)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(modules()):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_import_graph_has_no_cycle() -> None:
    assert cycles(imports()) == []


def test_no_cycle_through_a_package_that_loads_its_own_modules() -> None:
    edges = _edges(eager=True)
    for name in modules():
        parts = name.split(".")
        for k in range(1, len(parts)):
            edges[name].add(".".join(parts[:k]))  # importing a module imports its packages first
    for component in cycles(edges):
        root = min(component, key=len)  # the outermost package of the component
        # a package that loads its own modules, which load their siblings, is fine: no module
        # outside it may be on the way back
        outside = [m for m in component if m != root and not m.startswith(root + ".")]
        assert not outside, f"{outside} import back into {root} while it loads: {component}"


def test_no_module_is_over_the_size_limit() -> None:
    long = {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES and name not in GENERATED
    }
    assert long == {}


def test_no_function_outside_migrations_is_over_the_size_limit() -> None:
    long = {}
    for name, path in modules().items():
        if name.startswith(FUNCTION_UNLIMITED):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{name}.{node.name}"] = lines
    assert long == {}


KIND_BLIND = (
    "nfvplace.placement.engine",
    "nfvplace.placement.joint",
    "nfvplace.claims",
    "nfvplace.store",
)
"""Packages that reach the kinds only through the registry and the kinds' hooks."""


def _kind_names() -> set[str]:
    """The module-level names the kinds are bound to (`CPU`, `NICS`, ...)."""
    import importlib

    from nfvplace.placement.resources import KINDS

    names = set()
    for name in modules():
        if name.startswith("nfvplace.placement.resources"):
            module = importlib.import_module(name)
            names.update(k for k, v in vars(module).items() if any(v is kind for kind in KINDS))
    return names - {"KINDS"}


def test_no_kind_is_named_outside_the_resources_package() -> None:
    kinds = _kind_names()
    naming = {}
    for name, path in modules().items():
        if not name.startswith(KIND_BLIND):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (found := {a.name for a in node.names} & kinds):
                naming[name] = sorted(found)
    assert naming == {}
    assert kinds >= {"CPU", "MEMORY", "NICS", "CACHE_WAYS"}  # the scan sees the kinds
