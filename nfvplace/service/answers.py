"""A placement's answer as JSON: its VM Configurations written once (pydantic-core, in Rust) for
the store's row, the stored answer and the HTTP answer alike, and the answer around them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_core import to_json

from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from ..store.records import CONFIGURATION, CONFIGURATIONS


def configurations_json(
    configs: Sequence[VmConfiguration], known: tuple[VmDescriptor, str] | None = None
) -> bytes:
    """The VM Configurations as JSON, serialised once (pydantic-core) for the store's row, the
    stored answer and the HTTP answer alike. `known`: a VM Descriptor and its JSON written
    already (the request's stored descriptor): a configuration that holds that very descriptor
    (its last field) is written without it and the JSON put in, the same text."""
    if known is None or not any(config.descriptor is known[0] for config in configs):
        return CONFIGURATIONS.dump_json(list(configs), by_alias=True, exclude_none=True)
    descriptor = b',"descriptor":' + known[1].encode() + b"}"
    parts = []
    for config in configs:
        if config.descriptor is known[0]:
            rest = CONFIGURATION.dump_json(
                config, by_alias=True, exclude_none=True, exclude={"descriptor"}
            )
            parts.append(rest[:-1] + descriptor)
        else:
            parts.append(CONFIGURATION.dump_json(config, by_alias=True, exclude_none=True))
    return b"[" + b",".join(parts) + b"]"


def answer_json(head: dict[str, Any], configurations: bytes, tail: dict[str, Any]) -> bytes:
    """`{**head, "configurations": ..., **tail}` as JSON, the configurations as given (`head` is
    never empty: the id of a placement, or the dry run's flag)."""
    text = to_json(head)[:-1] + b',"configurations":' + configurations
    return text + (b"," + to_json(tail)[1:-1] if tail else b"") + b"}"
