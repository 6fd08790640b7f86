"""Common base for every descriptor model: immutable, strict about unknown fields."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints


class Model(BaseModel):
    """Frozen pydantic model that rejects unknown fields.

    Descriptors are values: two equal documents give equal models, and nothing downstream may
    change one in place (placement returns new host descriptors instead).
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        populate_by_name=True,
        validate_default=True,
        use_enum_values=False,
        ser_json_inf_nan="strings",
        defer_build=True,  # validators are built when a kind is first used: quicker start-up
    )


PCI_ADDRESS_PATTERN = r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$"

PciAddress = Annotated[
    str,
    StringConstraints(pattern=PCI_ADDRESS_PATTERN),
    Field(description="PCI address in domain:bus:device.function form, e.g. 0000:18:00.0"),
]
"""A PCI address `DDDD:BB:DD.F`; lint compares them case-insensitively."""

Identifier = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,252}$"),
    Field(
        description="Name made of letters, digits and . _ : @ / -, starting with a letter or digit"
    ),
]

NonNegativeInt = Annotated[int, Field(ge=0)]
PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeFloat = Annotated[float, Field(ge=0)]
Ratio = Annotated[float, Field(ge=0)]
