"""The package's shape (docs/architecture.md): no import cycle, and the size limits.

The import graph counts every import, at module level, inside functions and under TYPE_CHECKING. A
second graph adds what Python does implicitly: importing `a.b.c` imports the packages `a` and `a.b`
first, so a package whose `__init__` imports its own modules must not be reached back from outside
it while it loads.
"""

from __future__ import annotations

import ast
import re
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


# The kinds' stage protocols (placement/resources/stages.py): small, each implemented for real, and
# every stage whose order decides an answer listing exactly the kinds that implement it.

MAX_STAGE_MEMBERS = 2  # a stage protocol's own methods and properties, besides the kind's name


def _members(protocol: type) -> set[str]:
    """A stage protocol's own members (its methods and properties, not the inherited name)."""
    return {
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    }


def _stage_members(protocol: type) -> set[str]:
    """Every member a kind must have to implement `protocol` (its bases' included)."""
    return set().union(*(_members(base) for base in protocol.__mro__ if base is not object))


def test_every_stage_protocol_is_small() -> None:
    from nfvplace.placement.resources.stages import STAGES

    wide = {p.__name__: sorted(_members(p)) for p in STAGES if len(_members(p)) > MAX_STAGE_MEMBERS}
    assert wide == {}
    assert len(STAGES) >= 20  # the scan sees the stages


def test_the_kind_base_gives_no_stage_a_default() -> None:
    from nfvplace.placement.resources.kind import Kind
    from nfvplace.placement.resources.stages import STAGES

    hooks = set().union(*(_stage_members(p) for p in STAGES)) - {"name"}
    assert hooks & set(vars(Kind)) == set()


def _does_nothing(function: object) -> bool:
    """Whether a method's body (its docstring aside) only returns a constant, an empty container
    or nothing: a stage implemented by a no-op."""
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(function))  # type: ignore[arg-type]
    body = ast.parse(source).body[0].body  # type: ignore[attr-defined]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) != 1:
        return False
    only = body[0]
    if isinstance(only, ast.Pass):
        return True
    if isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant):
        return True  # `...`
    if isinstance(only, ast.Return):
        value = only.value
        empty = isinstance(value, ast.List | ast.Tuple | ast.Dict | ast.Set) and not (
            getattr(value, "elts", None) or getattr(value, "keys", None)
        )
        return value is None or isinstance(value, ast.Constant) or empty
    return False


def test_no_kind_implements_a_stage_by_doing_nothing() -> None:
    from nfvplace.placement.resources import KINDS, implementing
    from nfvplace.placement.resources.stages import STAGES

    idle = {}
    for protocol in STAGES:
        for kind in implementing(protocol):
            for member in _members(protocol):
                method = getattr(type(kind), member)
                if callable(method) and _does_nothing(method):
                    idle[f"{kind.name}.{member}"] = protocol.__name__
    assert idle == {}
    assert {kind.name for kind in KINDS} == {k.name for p in STAGES for k in implementing(p)}


def test_every_public_method_of_a_kind_belongs_to_a_stage() -> None:
    """A hook misspelled, or with a stage's name but not its shape, would be silently skipped."""
    import inspect

    from nfvplace.placement.resources import KINDS, implementing
    from nfvplace.placement.resources.stages import STAGES

    stray = {}
    for kind in KINDS:
        in_stages = set().union(*(_stage_members(p) for p in STAGES if kind in implementing(p)))
        public = {
            name
            for name, value in inspect.getmembers(type(kind))
            if not name.startswith("_") and callable(value)
        }
        if public - in_stages:
            stray[kind.name] = sorted(public - in_stages)
    assert stray == {}


def test_each_ordered_stage_lists_exactly_the_kinds_that_implement_it() -> None:
    from nfvplace.placement import resources as r
    from nfvplace.placement.resources import stages as k

    ordered = {
        "HOST_CHECKS": k.HostChecks,
        "NODE_NEEDS": k.NodeNeeds,
        "DECIDES": k.Decides,
        "MODEL_DEMAND": k.ModelDemand,
        "MODEL_LIMITS": k.ModelLimits,
        "BLAME": k.ModelLimits,
        "EXPLAINS": k.Explains,
        "COUNT_TAKES": k.CountTakes,
        "COUNT_CAPS": k.CountCaps,
        "RELAX_NODES": k.RelaxNodes,
        "RELAX_HOSTS": k.RelaxHosts,
        "RELAX_FINISH": k.RelaxFinish,
        "CLAIMS": k.Claims,
        "FILLS": k.Fills,
        "HOLDS_UNITS": k.HoldsUnits,
        "HOLDS_SHARES": k.HoldsShares,
        "KUBELET_COUNTS": k.KubeletCounts,
    }
    wrong = {}
    for name, protocol in ordered.items():
        listed = [kind.name for kind in getattr(r, name)]
        implementing = sorted(kind.name for kind in r.implementing(protocol))
        if sorted(listed) != implementing or len(set(listed)) != len(listed):
            wrong[name] = (listed, implementing)
    assert wrong == {}
    tuples = {n for n, v in vars(r).items() if n.isupper() and isinstance(v, tuple)}
    assert tuples - {"KINDS"} == set(ordered)  # a new ordered stage is checked here too


class _Samples:
    def nothing(self) -> None:
        """A docstring does not count."""
        return None

    def empty(self) -> list[int]:
        return []

    def constant(self) -> bool:
        return True

    def passes(self) -> None:
        pass

    def works(self, x: int) -> int:
        return x + 1

    def checks(self, x: int) -> list[int]:
        if x:
            return [x]
        return []


def test_a_no_op_is_told_from_a_method_that_works() -> None:
    idle = {name for name in vars(_Samples) if not name.startswith("_")}
    found = {name for name in idle if _does_nothing(getattr(_Samples, name))}
    assert found == {"nothing", "empty", "constant", "passes"}


HOST_DOCUMENT = frozenset({"available", "available_generation"})  # `hosts`' cached availability


def _writes_host_document(node: ast.AST) -> bool:
    """`node` sets a column of `HOST_DOCUMENT`: `.values(available=...)`, `.values({...})` or a
    host row given as a dict (an insert's) with those keys."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr != "values":
            return False
        if any(k.arg in HOST_DOCUMENT for k in node.keywords):
            return True
        return any(isinstance(a, ast.Dict) and _writes_host_document(a) for a in node.args)
    if isinstance(node, ast.Dict):
        keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
        return bool(keys & HOST_DOCUMENT) and bool(keys & {"generation", "chd"})
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.search(r"(?i)\bset\b[^;]*\bavailable(_generation)?\s*=", node.value) is not None
    return False


def _top_level_names(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    """Each statement of a module with the name it defines (`Class.method` for methods)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                name = getattr(item, "name", None) or _assigned(item)
                yield f"{stmt.name}.{name}", item
        else:
            yield getattr(stmt, "name", None) or _assigned(stmt), stmt


def _assigned(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    return f"line {stmt.lineno}"


def test_one_writer_of_a_hosts_availability_document() -> None:
    """`hosts.available` (and the generation it is exact at) is written by one statement, the
    write-back's (store/availability.py); the other place is the row's creation, with the new host's
    report. Migrations are schema steps and may rewrite it; nothing else in the package does."""
    writers = set()
    for name, path in modules().items():
        if name.startswith(FUNCTION_UNLIMITED):
            continue
        for where, stmt in _top_level_names(ast.parse(path.read_text())):
            if any(_writes_host_document(node) for node in ast.walk(stmt)):
                writers.add(f"{name}.{where}")
    assert writers == {
        "nfvplace.store.availability.WRITE_BACK",
        "nfvplace.store.repository.Store._put_host",
    }
