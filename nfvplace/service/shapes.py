"""Placement requests kept by shape: a single VM's body that differs from one read before only in
the VM's name is read as that request with the name put in.

Orchestrators send the same few descriptors under a new VM name each time (the realistic mix: 19
shapes in 4,000 requests), so a body's bytes are seldom sent twice, while parsing, validating and
linting a VM Descriptor is one of the largest pieces of the server's own work around a placement
(docs/benchmarks.md, the fourteenth round). The name is in no rule of the gate and in no validator
but its field's pattern, so a body of a shape read before, with a name that pattern takes, gives
the request that reading it would give. Any other body (a name the pattern refuses, a VNF, a
batch, a dialect, YAML or XML) is read whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from ..models.base import IDENTIFIER_PATTERN
from ..models.loading import SourceDocument
from ..models.vmd import VMD_SCHEMA, VmDescriptor
from ..store.db import JsonText
from .placing import PlacementRequest, canonical_body

KEPT_SHAPES = 256
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
# put where the name goes, to find that place in the canonical text: no descriptor holds it (a
# NUL is refused in every string), and where it is found more than once the body is hashed whole
_MARK = "\x00nfvplace-vm-name\x00"


@dataclass(frozen=True)
class _KeptShape:
    request: PlacementRequest  # the request read from a body of this shape
    around: tuple[str, str] | None  # its canonical JSON (the hash's) before and after the name
    stored: tuple[str, str] | None  # its stored descriptor's JSON before and after the name


class RequestShapes:
    """`read` (the body read whole) kept for the last `size` shapes of JSON bodies. Used by one
    thread, the worker's event loop (the route reads its body there)."""

    def __init__(
        self, read: Callable[[SourceDocument], PlacementRequest], size: int = KEPT_SHAPES
    ) -> None:
        self._read = read
        self._size = size
        self._shapes: dict[bytes, _KeptShape] = {}

    def request(self, document: SourceDocument) -> PlacementRequest:
        """The request of a JSON body (`document`, as `body.parse_body` read it)."""
        named = _named_vm(document.data)
        if named is None:
            return self._read(document)
        name, key = named
        shape = self._shapes.get(key)
        if shape is not None and _IDENTIFIER.fullmatch(name):
            return _renamed(shape, document.data, name)
        request = self._read(document)  # a refusal raises: nothing refused is kept
        if isinstance(request.descriptor, VmDescriptor) and request.descriptor.name == name:
            if len(self._shapes) >= self._size:
                del self._shapes[next(iter(self._shapes))]
            kept = _KeptShape(request, _around(document.data), _stored_around(request.descriptor))
            self._shapes[key] = kept
        return request


def _named_vm(body: Any) -> tuple[str, bytes] | None:
    """A body `{"vm": {"schema": VM Descriptor, "name": str, ...}, ...}`: the VM's name, and the
    body without it as JSON (a text that reads back as the very value, so that equal texts are
    equal bodies but for the name); None for any other body."""
    if type(body) is not dict:
        return None
    vm = body.get("vm")
    if type(vm) is not dict or vm.get("schema") != VMD_SCHEMA:
        return None
    name = vm.get("name")
    if type(name) is not str:
        return None
    unnamed = {k: v for k, v in vm.items() if k != "name"}
    try:  # JSON that reads back as the very value (NaN as NaN): twice as quick as `json.dumps`
        return name, to_json({**body, "vm": unnamed}, inf_nan_mode="constants")
    except PydanticSerializationError:  # a lone surrogate, which JSON text may escape
        return None


def _split(text: str, mark: str) -> tuple[str, str] | None:
    """`text` before and after `mark` (the name's mark as that JSON writes it); None where the
    mark is found other than once."""
    if text.count(mark) != 1:
        return None
    before, _, after = text.partition(mark)
    return before, after


def _around(body: dict[str, Any]) -> tuple[str, str] | None:
    """The body's canonical JSON (`canonical_body`) split where the VM's name is written."""
    return _split(canonical_body({**body, "vm": {**body["vm"], "name": _MARK}}), json.dumps(_MARK))


def _stored_around(descriptor: VmDescriptor) -> tuple[str, str] | None:
    """The descriptor's stored JSON (`PlacementRequest.stored_descriptor`) split where its name
    is written."""
    marked = descriptor.model_copy(update={"name": _MARK})
    return _split(marked.model_dump_json(by_alias=True, exclude_none=True), to_json(_MARK).decode())


def _renamed(shape: _KeptShape, body: dict[str, Any], name: str) -> PlacementRequest:
    kept = shape.request
    assert isinstance(kept.descriptor, VmDescriptor)
    around, stored = shape.around, shape.stored
    return replace(
        kept,
        descriptor=kept.descriptor.model_copy(update={"name": name}),
        body=body,
        canonical=None if around is None else around[0] + json.dumps(name) + around[1],
        stored=None if stored is None else JsonText(stored[0] + to_json(name).decode() + stored[1]),
    )
