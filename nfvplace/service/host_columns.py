"""CHDs whose PUs and VFs come as columns (`POST /v1/evaluations`), read straight into models.

The Nova filter sends each host's `cpus` and `vfs` as columns (the wire form is defined in
`nfvplace.integrations.nova.columns`): a thousand hosts of a hundred PUs in a few hundred thousand
integers, not a hundred thousand objects. Written out as rows and validated, they would cost what
the rows cost; instead each distinct row (a PU is its id, core, siblings and other fields, the same
on many hosts of a fleet) is validated once per worker process, as the CHD's model validates it,
and kept: the CHD around the rows is then validated as usual, taking the kept rows as they are
(pydantic takes an instance of a field's model as valid). The model is the one the rows give.
Rows are kept by layout (a node's columns, which the plug-in writes the same for every host of a
hardware kind), template and position, each key read as JSON (so that 1, 1.0 and true, which
hash alike, are kept apart): a node looks up its layout and templates, and each row is found by
its position, rather than by hashing every row's values. Only valid rows are kept. A row not kept
yet is validated only when its template or its column values were never validated before (in any
layout): each field of a PU or a VF is validated on its own, so such a row is joined from what
they validated to (a cold thousand-host pass validates about 5,000 rows of 21,500).

Anything amiss (the columns not as `check` wants them, a row or the CHD refused) goes the long
way: `rows` writes the CHD out as rows, and the route validates them as any CHD, so that a refusal
carries the same code and findings (a row's field named by its row: `numa_nodes[0].cpus[5].state`).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_json

from .. import errors
from ..integrations.nova.columns import TEMPLATE, TEMPLATES, expanded
from ..lint.rules.document import SCHEMA
from ..models.chd import ComputeHostDescriptor, Cpu, VirtualFunction
from .descriptors import json_pointer
from .problems import ProblemError

KEPT_ROWS = 65536  # distinct rows kept per worker (a thousand-host fleet holds about 22,000)


def _fields_apart(model: type[BaseModel]) -> bool:
    """Whether each field of `model` is validated on its own: no validator of the model or of a
    field reads another field (none is declared; the fields' own types read only their value),
    nothing runs after validation, and no extra field is kept. A row of such a model is then its
    template's validated fields with its columns' validated values (`_joined`)."""
    found = model.__pydantic_decorators__
    validators = (found.validators, found.field_validators, found.root_validators)
    return (
        not any(validators)
        and not found.model_validators
        and model.model_config.get("extra") == "forbid"
        and not model.__pydantic_post_init__
        and not model.__pydantic_root_model__
    )


_JOINED = frozenset(model for model in (Cpu, VirtualFunction) if _fields_apart(model))
_new = object.__new__
_set = object.__setattr__

Shape = tuple[Hashable, ...]  # a model and its column names
# rows kept: by layout (model, column names, the columns' JSON), template (JSON) and position
_layouts: dict[tuple[Shape, bytes], dict[bytes, dict[int, BaseModel]]] = {}
# what rows not kept are joined from (`_joined`): per model and column names, a row validated
# with each template (by its JSON), and each row's column values as validated (by their JSON)
_protos: dict[tuple[Shape, bytes], BaseModel] = {}
_cells: dict[tuple[Shape, bytes], dict[str, Any]] = {}
_kept = 0
_NONE: dict[int, BaseModel] = {}  # a template with no row kept (never written to)
_NONE_KEPT: dict[bytes, dict[int, BaseModel]] = {}  # a layout with no row kept (never written to)
_lock = threading.RLock()


class ColumnsError(ValueError):
    """Columns that stand for no rows: where (a path in the CHD) and why."""

    def __init__(self, path: Sequence[str | int], message: str) -> None:
        super().__init__(message)
        self.path = tuple(path)


def has_columns(chd: Mapping[str, Any]) -> bool:
    nodes = chd.get("numa_nodes")
    if not isinstance(nodes, list):
        return False
    return any(_is_mapping(n) and _columned(n) for n in nodes)


def _columned(node: Mapping[str, Any]) -> bool:
    if _is_mapping(node.get("cpus")):
        return True
    nics = node.get("nics")
    return isinstance(nics, list) and any(
        _is_mapping(port) and _is_mapping(port.get("vfs")) for nic in nics for port in _ports(nic)
    )


def _ports(nic: Any) -> list[Any]:
    ports = nic.get("ports") if _is_mapping(nic) else None
    return ports if isinstance(ports, list) else []


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # JSON's objects are dicts


def check(columns: Any, at: Sequence[str | int]) -> tuple[list[str], list[list[Any]], list[int]]:
    """The columns' names, values and each row's template, or a `ColumnsError`: an object of
    lists of one length, `template` integers within `templates` (objects naming no column)."""
    if not _is_mapping(columns):
        raise ColumnsError(at, "must be a list of objects, or an object of columns")
    names = [name for name in columns if name not in (TEMPLATE, TEMPLATES)]
    values = [columns[name] for name in names]
    templates = columns.get(TEMPLATES, [{}])
    if not isinstance(templates, list) or not all(map(_is_mapping, templates)):
        raise ColumnsError((*at, TEMPLATES), "must be a list of objects (each row's other fields)")
    columned = set(names)
    for k, template in enumerate(templates):
        if not columned.isdisjoint(template):
            both = sorted(columned.intersection(template))
            raise ColumnsError((*at, TEMPLATES, k), f"gives {both} that are columns too")
    for name, column in zip(names, values, strict=True):
        if not isinstance(column, list):
            raise ColumnsError((*at, name), "must be a list (a column: one value per row)")
    which = columns.get(TEMPLATE)
    if which is not None and (not isinstance(which, list) or not set(map(type, which)) <= {int}):
        raise ColumnsError((*at, TEMPLATE), "must be a list of integers (indexes of templates)")
    count = len(values[0]) if values else len(which or ())
    which = [0] * count if which is None else which
    if which and not 0 <= min(which) <= max(which) < len(templates):
        raise ColumnsError((*at, TEMPLATE), f"must index templates (0 to {len(templates) - 1})")
    for name, column in (*zip(names, values, strict=True), (TEMPLATE, which)):
        if len(column) != count:
            raise ColumnsError((*at, name), f"has {len(column)} values where the rows are {count}")
    return names, values, which


def rows_of(index: int, chd: Mapping[str, Any]) -> dict[str, Any]:
    """hosts[index]'s CHD with its columns written out as rows; a 422 naming the columns that
    stand for no rows."""
    try:
        return rows(chd)
    except ColumnsError as exc:
        finding = {
            "rule": SCHEMA.id,  # NFV001, as for any CHD that is not one
            "code": errors.INPUT_INVALID,
            "severity": "error",
            "file": f"body.hosts[{index}]",
            "path": ".".join(map(str, exc.path)),
            "pointer": json_pointer(("hosts", index, *exc.path)),
            "message": str(exc),
        }
        raise ProblemError(
            422,
            errors.INPUT_INVALID,
            f"hosts[{index}] is not a valid CHD",
            extra={"findings": [finding]},
        ) from None


def rows(chd: Mapping[str, Any]) -> dict[str, Any]:
    """The CHD with its columns written out as rows; a `ColumnsError` for columns that stand
    for no rows."""
    nodes = []
    for k, node in enumerate(chd["numa_nodes"]):
        if not isinstance(node, Mapping):
            nodes.append(node)
            continue
        node = dict(node)
        if isinstance(node.get("cpus"), Mapping):
            check(node["cpus"], ("numa_nodes", k, "cpus"))
            node["cpus"] = expanded(node["cpus"])
        if isinstance(node.get("nics"), list):
            at = ("numa_nodes", k, "nics")
            node["nics"] = [_nic_rows(nic, (*at, n)) for n, nic in enumerate(node["nics"])]
        nodes.append(node)
    return {**chd, "numa_nodes": nodes}


def _nic_rows(nic: Any, at: tuple[str | int, ...]) -> Any:
    if not isinstance(nic, Mapping) or not isinstance(nic.get("ports"), list):
        return nic
    ports = []
    for p, port in enumerate(nic["ports"]):
        if isinstance(port, Mapping) and isinstance(port.get("vfs"), Mapping):
            check(port["vfs"], (*at, "ports", p, "vfs"))
            port = {**port, "vfs": expanded(port["vfs"])}
        ports.append(port)
    return {**nic, "ports": ports}


def model_of(chd: Mapping[str, Any]) -> ComputeHostDescriptor | None:
    """The CHD's model, its rows read from the kept ones; None when anything is amiss (the
    caller validates `rows(chd)` for the findings)."""
    try:
        nodes = [_node(node, k) for k, node in enumerate(chd["numa_nodes"])]
        return ComputeHostDescriptor.model_validate({**chd, "numa_nodes": nodes})
    except (ValueError, TypeError, KeyError):  # ColumnsError and ValidationError are ValueErrors
        return None


def _node(node: Mapping[str, Any], k: int) -> Mapping[str, Any]:
    out = dict(node)
    if _is_mapping(node.get("cpus")):
        out["cpus"] = _models(Cpu, node["cpus"], ("numa_nodes", k, "cpus"))
    nics = node.get("nics")
    if isinstance(nics, list):
        out["nics"] = [
            {**nic, "ports": [_port(port) for port in nic["ports"]]}
            if _is_mapping(nic) and isinstance(nic.get("ports"), list)
            else nic
            for nic in nics
        ]
    return out


def _port(port: Any) -> Any:
    if _is_mapping(port) and _is_mapping(port.get("vfs")):
        return {**port, "vfs": _models(VirtualFunction, port["vfs"], ())}
    return port


def _models(
    model: type[BaseModel], columns: Mapping[str, Any], at: Sequence[str | int]
) -> tuple[BaseModel, ...]:
    """The rows of `columns` as `model`s, each distinct one validated once and kept. Rows are kept
    per layout (the model, the column names and every column's values, which the plug-in writes
    the same for every host of a hardware kind: a node's PU ids, cores and siblings) and, within
    it, per template and position: a row is then found by a dictionary look-up, not by hashing
    its values (a hundred thousand rows a request). A row not kept is validated only when its
    template or its column values are new; otherwise it is joined from what they validated to."""
    names, values, which = check(columns, at)
    templates = columns.get(TEMPLATES, [{}])
    shape = (model, *names)
    layout_key = (shape, to_json(values))
    layout = _layouts.get(layout_key, _NONE_KEPT)
    # each template's rows kept, by its fields as JSON (1, 1.0 and true apart)
    keys = [to_json(t) for t in templates]
    tables = [layout.get(key, _NONE) for key in keys]
    found: list[BaseModel | None] = [tables[k].get(i) for i, k in enumerate(which)]
    missing = [i for i, row in enumerate(found) if row is None]
    if not missing:
        return tuple(found)  # type: ignore[arg-type]  # every row found
    made = _Made()
    joins = model in _JOINED
    for i in missing:
        k = which[i]
        given = [column[i] for column in values]
        proto = made.protos.get(keys[k], _protos.get((shape, keys[k])))
        cells_key = to_json(given)
        cells = made.cells.get(cells_key, _cells.get((shape, cells_key)))
        if proto is None or cells is None or not joins:
            row = model.model_validate({**templates[k], **dict(zip(names, given, strict=True))})
            made.protos.setdefault(keys[k], row)
            made.cells.setdefault(cells_key, {name: row.__dict__[name] for name in names})
        else:
            fields = made.fields.get(k)
            if fields is None:
                fields = made.fields[k] = {*templates[k], *names}
            row = _joined(model, proto, cells, fields)
        found[i] = row
        made.rows.append((keys[k], i, row))
    _keep(layout_key, made)
    return tuple(found)  # type: ignore[arg-type]  # every None replaced


class _Made:
    """What a node's rows not kept gave: its rows (template, position, row), and what rows are
    joined from (`_protos` and `_cells` of this node), and each template's fields set."""

    __slots__ = ("cells", "fields", "protos", "rows")

    def __init__(self) -> None:
        self.rows: list[tuple[bytes, int, BaseModel]] = []
        self.protos: dict[bytes, BaseModel] = {}
        self.cells: dict[bytes, dict[str, Any]] = {}
        self.fields: dict[int, set[str]] = {}


def _joined(
    model: type[BaseModel], proto: BaseModel, cells: Mapping[str, Any], fields: set[str]
) -> BaseModel:
    """The row of `proto`'s template with the column values `cells` (as validated): what
    `model_validate` gives for it, each field being validated on its own (`_JOINED`), built as
    `model_construct` builds a model, in a third of a validation's time."""
    row = _new(model)
    _set(row, "__dict__", {**proto.__dict__, **cells})  # in the fields' order, as validated
    _set(row, "__pydantic_fields_set__", fields)
    _set(row, "__pydantic_extra__", None)  # extra="forbid"
    _set(row, "__pydantic_private__", None)
    return row


def _keep(layout: tuple[Shape, bytes], made: _Made) -> None:
    """Keep rows validated or joined in their layout by template and position, and what they
    were joined from (only what was valid: what is kept is bounded by the rows)."""
    global _kept
    shape, count = layout[0], len(made.rows)
    with _lock:
        if _kept + count > KEPT_ROWS:  # another fleet: start again rather than sort out the old
            forget()
            if count > KEPT_ROWS:  # more than may be kept at all
                return
        templates = _layouts.setdefault(layout, {})
        for template, i, row in made.rows:
            templates.setdefault(template, {})[i] = row
        for template, proto in made.protos.items():
            _protos.setdefault((shape, template), proto)
        for values, cells in made.cells.items():
            _cells.setdefault((shape, values), cells)
        _kept += count


def forget() -> None:
    """Forget the rows kept (as a new worker holds none)."""
    global _kept
    with _lock:
        _layouts.clear()
        _protos.clear()
        _cells.clear()
        _kept = 0


def kept_rows() -> int:
    return _kept
