"""Typed request bodies of the REST API: what the OpenAPI document publishes, so that client
generators produce typed functions (not `Any`), and what the routers read the envelope with
(`PlacementEnvelope` for `POST /v1/placements`).

The envelope leaves the descriptors inside (`vm`, `vnf`, a batch's VMs) as sent: they go through
the gate (`descriptors.parse_descriptor`), which keeps the line numbers of YAML bodies in its
findings. Streams that extend a request add a field here and read it in the router.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from ..dialects import DIALECT_NAMES
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate

PolicyName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$"),
    Field(description="Placement policy, e.g. `pack` or `spread`"),
]


def _no_default(schema: dict[str, Any]) -> None:
    """An absent descriptor is not `null`: publish no default for it."""
    schema.pop("default", None)


DIALECTS = ("nfvplace", *DIALECT_NAMES)


class PlacementOptions(BaseModel):
    """The members of a placement request besides the descriptor."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    dry_run: bool = Field(False, description="Compute the placement, claim nothing (200)")
    policy: PolicyName = "pack"
    explain: bool = Field(False, description="Add the solver's explanation to the answer")
    moves: bool = Field(
        False, description="With dry_run and vm: if it fits nowhere, moves that make room"
    )


TARGETS = ("vm", "vnf", "batch")
ENVELOPE_ERROR = "nfvplace_envelope"  # the error type of the envelope's own rules


def _refused(message: str) -> PydanticCustomError:
    return PydanticCustomError(ENVELOPE_ERROR, message)


class BatchEnvelopeEntry(BaseModel):
    """A batch's entry as the router reads it: the VM left as sent, for the gate."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    vm: Any
    count: int = Field(1, ge=1, le=10_000)


class PlacementEnvelope(PlacementOptions):
    """`POST /v1/placements` as the router reads it: the options checked, exactly one of `vm`,
    `vnf` or `batch`, and the rules between members; the descriptors inside are left as sent,
    for the gate (`descriptors.parse_descriptor`, which keeps a YAML body's line numbers)."""

    vm: Any = None
    vnf: Any = None
    batch: list[BatchEnvelopeEntry] | None = Field(None, min_length=1)
    dialect: Any = None  # checked with the descriptor it applies to (`check_dialect`)

    @model_validator(mode="before")
    @classmethod
    def _one_target(cls, body: Any) -> Any:
        if not isinstance(body, Mapping):
            raise _refused('the body must be a JSON object: {"vm": ...} or {"vnf": ...}')
        unknown = sorted(str(k) for k in body if k not in ENVELOPE)
        if unknown:
            raise _refused(f"unknown member(s) {unknown}; use {sorted(ENVELOPE)}")
        if sum(key in body for key in TARGETS) != 1:
            raise _refused(
                'give exactly one of "vm" (a VM Descriptor), "vnf" (a VNF template) or "batch" '
                '([{"vm": VM Descriptor, "count": k}, ...])'
            )
        return body

    @model_validator(mode="after")
    def _members_agree(self) -> PlacementEnvelope:
        if self.batch is not None and "dialect" in self.model_fields_set:
            raise _refused(
                '"dialect" applies to "vm" or "vnf"; the VMs of a batch are each read in the '
                "dialect they are written in"
            )
        if self.moves and not (self.dry_run and "vm" in self.model_fields_set):
            raise _refused(
                '"moves": true asks for moves that make room for one VM on a dry run: '
                'give "vm" and "dry_run": true'
            )
        return self


class BatchEntry(BaseModel):
    """`count` copies of one VM, placed together with the batch's other entries."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    vm: VmDescriptor
    count: int = Field(1, ge=1, le=10_000, description="How many copies of the VM")


class PlacementRequestBody(PlacementOptions):
    """`POST /v1/placements`: exactly one of `vm` (a VM Descriptor), `vnf` (a VNF template) or
    `batch` (VMs with counts, placed jointly)."""

    # what the OpenAPI document publishes; the router reads the same body as `PlacementEnvelope`,
    # then the descriptors through the gate
    model_config = ConfigDict(title="PlacementRequest")

    vm: VmDescriptor | SkipJsonSchema[None] = Field(
        None, description="The VM to place", json_schema_extra=_no_default
    )
    vnf: VnfTemplate | SkipJsonSchema[None] = Field(
        None,
        description="A VNF template whose members are placed together (inline descriptors)",
        json_schema_extra=_no_default,
    )
    batch: list[BatchEntry] | SkipJsonSchema[None] = Field(
        None,
        min_length=1,
        max_length=1_000,
        description="VMs with counts, placed all together or not at all",
        json_schema_extra=_no_default,
    )

    dialect: Literal[DIALECTS] | SkipJsonSchema[None] = Field(  # type: ignore[valid-type]
        None,
        description='"vm" or "vnf" is written in this dialect (not nfvplace\'s format) and is '
        "converted first (detected when not given); see docs/dialects.md",
        json_schema_extra=_no_default,
    )

    @model_validator(mode="after")
    def _one_descriptor(self) -> PlacementRequestBody:
        if sum(x is not None for x in (self.vm, self.vnf, self.batch)) != 1:
            raise ValueError('give exactly one of "vm", "vnf" or "batch"')
        return self


class CapacityRequestBody(BaseModel):
    """`POST /v1/capacity`: how many more instances of `vm` fit (read-only)."""

    model_config = ConfigDict(title="CapacityRequest", extra="forbid", strict=True, frozen=True)

    vm: VmDescriptor = Field(description="The VM whose instances are counted")
    dialect: Literal[DIALECTS] | SkipJsonSchema[None] = Field(  # type: ignore[valid-type]
        None,
        description='"vm" is written in this dialect (detected when not given); see '
        "docs/dialects.md",
        json_schema_extra=_no_default,
    )


ENVELOPE = frozenset(PlacementEnvelope.model_fields)
"""Every member a placement request may have."""
