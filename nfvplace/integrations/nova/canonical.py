"""A CHD's canonical JSON (`client.digest`'s: keys sorted, no spaces), the plug-in's CHDs written
faster. Standard library only.

A cold filter pass writes and hashes a thousand CHDs. Most of a CHD's text is its nodes' PU
columns (`columns.py`), and of those the ids, cores and siblings depend on the host's topology
alone (`layout.CellLayout`: the same tuples of integers for every host of a hardware kind).
`remember` encodes such a tuple once, and `canonical` writes that text wherever it finds that very
object (a tuple of integers cannot change), the rest as `json.dumps` does: the text is
`json.dumps(chd without its id, sort_keys=True, separators=(",", ":"))` byte for byte, which the
service checks the digest against.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

KEPT_COLUMNS = 4096  # tuples remembered (a fleet's topologies: three columns per cell)


def _encoder() -> Callable[[Any], str]:
    """`json.dumps(value, sort_keys=True, separators=(",", ":"))`: the C encoder that
    `JSONEncoder.encode` makes at each call, made once (a cold pass encodes six thousand small
    values: the making was a third of it). It checks for no circular reference: a CHD the plug-in
    writes is plain data, and one would fail anyway (RecursionError rather than ValueError)."""
    plain = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        return plain.encode
    args = (None, plain.default, json.encoder.encode_basestring_ascii, None, ":", ",")
    encode = make(*args, True, False, True)  # sort_keys, skipkeys=False, allow_nan=True
    return lambda value: "".join(encode(value, 0))


_encode = _encoder()
_kept: dict[int, tuple[tuple[Any, ...], str]] = {}  # id -> the tuple (kept alive) and its JSON
_CPU_COLUMNS = {"core", "id", "siblings", "template", "templates"}  # as `hosts._node` writes them
_MARK = "\x00nfvplace: written apart\x00"
_MARK_JSON = _encode(_MARK)
_lock = threading.Lock()


def canonical(chd: Mapping[str, Any]) -> bytes:
    """`chd` without its id as `client.digest` writes it (keys sorted, no spaces)."""
    rest = {k: v for k, v in chd.items() if k != "id"}
    nodes = rest.get("numa_nodes")
    if type(nodes) is not list or not all(type(n) is dict for n in nodes):
        return _encode(rest).encode()
    return _spliced(rest, "numa_nodes", "[" + ",".join(map(_node, nodes)) + "]").encode()


def _spliced(value: dict[str, Any], key: str, text: str) -> str:
    """`value` encoded with `text` as the encoding of `value[key]`: the rest is encoded around a
    marker, which must come out once (else all of it is encoded, and `text` is not used)."""
    around = _encode({**value, key: _MARK})
    if around.count(_MARK_JSON) != 1:
        return _encode(value)
    return around.replace(_MARK_JSON, text)


def _node(node: dict[str, Any]) -> str:
    cpus = node.get("cpus")
    if type(cpus) is not dict or cpus.keys() != _CPU_COLUMNS:
        return _encode(node)
    text = (  # the keys in order, as sort_keys writes them
        f'{{"core":{_column(cpus["core"])},"id":{_column(cpus["id"])},'
        f'"siblings":{_column(cpus["siblings"])},"template":{_int_list(cpus["template"])},'
        f'"templates":{_encode(cpus["templates"])}}}'
    )
    rest = {k: v for k, v in node.items() if k != "cpus"}
    if not all(type(k) is str and k > "cpus" for k in rest):
        return _spliced(node, "cpus", text)
    # "cpus" first of the node's keys, as sort_keys writes them (`hosts._node`: id, memory,
    # nics, pci_devices): the rest encoded alone, written after it
    after = _encode(rest)
    return f'{{"cpus":{text}' + ("}" if after == "{}" else "," + after[1:])


def remember(column: tuple[Any, ...]) -> None:
    """Encode `column` once, if it is a tuple of integers or of tuples of integers (a layout's;
    anything else is written anew each time)."""
    if not all(type(v) is int or _ints(v) for v in column):
        return
    with _lock:
        if len(_kept) >= KEPT_COLUMNS:  # another fleet: start again
            _kept.clear()
        _kept[id(column)] = (column, _encode(column))


def _ints(value: Any) -> bool:
    return type(value) is tuple and all(type(v) is int for v in value)


def _int_list(value: Any) -> str:
    """A list of integers as JSON writes it (`int.__repr__`), without the encoder's call."""
    if type(value) is list and set(map(type, value)) <= {int}:
        return "[" + ",".join(map(repr, value)) + "]"
    return _encode(value)


def _column(value: Any) -> str:
    found = _kept.get(id(value))  # a remembered tuple is kept alive: no other object has its id
    return _encode(value) if found is None else found[1]
