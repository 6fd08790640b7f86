"""Typed request bodies of the REST API: what the OpenAPI document publishes, so that client
generators produce typed functions (not `Any`), and what the routers check the envelope with.

The descriptors inside (`vm`, `vnf`) are still parsed by `descriptors.parse_as`, which keeps the
line numbers of YAML bodies in its findings; these models type the envelope around them.
Streams that extend a request add a field here (e.g. `batch`, `dialect`) and read it in the router.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic.json_schema import SkipJsonSchema

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


class BatchEntry(BaseModel):
    """`count` copies of one VM, placed together with the batch's other entries."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    vm: VmDescriptor
    count: int = Field(1, ge=1, le=10_000, description="How many copies of the VM")


class PlacementRequestBody(PlacementOptions):
    """`POST /v1/placements`: exactly one of `vm` (a VM Descriptor), `vnf` (a VNF template) or
    `batch` (VMs with counts, placed jointly)."""

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


ENVELOPE = frozenset(PlacementRequestBody.model_fields)
"""Every member a placement request may have."""
OPTIONS = frozenset(PlacementOptions.model_fields)
