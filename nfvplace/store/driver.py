"""Statements run on the driver's own connection: compiled once by SQLAlchemy, their parameters
made as SQLAlchemy makes them, run on the driver's cursor (`db.run_on_driver`, `lane.Lane`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Any, cast

from sqlalchemy.engine import Compiled, Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Executable
from sqlalchemy.sql.compiler import SQLCompiler


def on_raw(
    raw: Any, dialect: Dialect, statement: Executable, rows: list[Any], *, read: bool
) -> Any:
    """`statement` run on the driver's connection `raw` once per row of `rows` (`db._on_driver`; SQLite:
    `lane.Lane`'s): the rows read (the driver's tuples) or changed. Errors are SQLAlchemy's."""
    prepared = prepared_for(statement, dialect)
    params = [prepared.parameters(row) for row in rows]
    cursor = raw.cursor()
    try:
        if len(params) == 1:
            cursor.execute(prepared.sql, params[0])
        else:
            cursor.executemany(prepared.sql, params)
        return list(cursor.fetchall()) if read else int(cursor.rowcount)
    except dialect.loaded_dbapi.Error as exc:
        raise DBAPIError.instance(prepared.sql, params, exc, dialect.loaded_dbapi.Error) from exc
    finally:
        cursor.close()


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A statement compiled for the driver: its text and, position by position, the key of the
    row it reads and SQLAlchemy's bind processor for it (worked out once: SQLAlchemy's
    `construct_params` and the processors' lookup per row were a third of the Python around a
    commit's statements)."""

    statement: Executable  # kept so that the cache's key (its id) is never reused
    compiled: SQLCompiler
    sql: str
    keys: tuple[str, ...]
    processors: tuple[Callable[[Any], Any] | None, ...]
    fixed: Mapping[str, Any]  # the values of binds a row does not give (`x + 1`'s 1)
    # two or more values, each the row's own as it is: read in C (`itemgetter`) where all given
    plain: Callable[[Mapping[str, Any]], tuple[Any, ...]] | None = None

    def parameters(self, row: Mapping[str, Any]) -> list[Any]:
        """The driver's positional parameters for `row`, as SQLAlchemy makes them."""
        try:
            if self.plain is not None:
                return list(self.plain(row))
            values = [row[key] if key in row else self.fixed[key] for key in self.keys]
        except KeyError:  # a required value missing: SQLAlchemy's own lookup says so
            named = self.compiled.construct_params(row)
            values = [named[name] for name in self.compiled.positiontup or ()]
        return [
            value if process is None or value is None else process(value)
            for value, process in zip(values, self.processors, strict=True)
        ]


_PREPARED: dict[tuple[int, str], _Prepared] = {}


def prepared_for(statement: Executable, dialect: Dialect) -> _Prepared:
    """`statement` (a module constant) prepared for `dialect`'s driver, once."""
    found = _PREPARED.get((id(statement), dialect.name))
    if found is not None and found.statement is statement:
        return found
    compiled = cast(SQLCompiler, compiled_for(statement, dialect))
    order = compiled.positiontup or ()
    processors = compiled._bind_processors
    binds = [compiled.binds[name] for name in order]
    found = _Prepared(
        statement,
        compiled,
        compiled.string,
        tuple(bind.key for bind in binds),
        tuple(
            cast(Callable[[Any], Any], processors[name]) if callable(processors.get(name)) else None
            for name in order
        ),
        {b.key: b.value for b in binds if not b.required and b.callable is None},
    )
    if len(found.keys) > 1 and not found.fixed and not any(found.processors):
        found = replace(found, plain=itemgetter(*found.keys))  # the values, given, as they are
    _PREPARED[(id(statement), dialect.name)] = found
    return found


_COMPILED: dict[tuple[int, str], tuple[Executable, Compiled]] = {}


def compiled_for(statement: Executable, dialect: Dialect) -> Compiled:
    """`statement` compiled for `dialect`, once (statements read alone are module constants)."""
    key = (id(statement), dialect.name)
    found = _COMPILED.get(key)
    if found is None or found[0] is not statement:
        found = _COMPILED[key] = (statement, statement.compile(dialect=dialect))  # type: ignore[attr-defined]
    return found[1]
