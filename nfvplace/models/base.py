"""Common base for every descriptor model: immutable, strict about unknown fields."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

# Bounds on every number and string a descriptor may hold: what the store (64-bit integers), the
# engine's arrays (int64 sums of products) and a worker's memory can take. Beyond them a value is a
# validation error naming its field, never a crash or a row that breaks later reads.
MAX_INT = 2**31 - 1  # ids, counts, frequencies, port numbers
MAX_VCPUS = 4096  # vCPUs of one VM (KVM's KVM_MAX_VCPUS on x86)
MAX_RATIO = 1_000_000.0  # oversubscription and usage ratios
MAX_TEXT = 16_384  # characters of any string
NO_NUL = r"^[^\x00]*$"  # strings with a NUL character break PostgreSQL text and C tools


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
        str_max_length=MAX_TEXT,  # every string is bounded (descriptions and command lines too)
    )


PCI_ADDRESS_PATTERN = r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$"

PciAddress = Annotated[
    str,
    StringConstraints(pattern=PCI_ADDRESS_PATTERN),
    Field(description="PCI address in domain:bus:device.function form, e.g. 0000:18:00.0"),
]
"""A PCI address `DDDD:BB:DD.F`; lint compares them case-insensitively."""

IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,252}$"

Identifier = Annotated[
    str,
    StringConstraints(pattern=IDENTIFIER_PATTERN),
    Field(
        description="Name made of letters, digits and . _ : @ / -, starting with a letter or digit"
    ),
]

NonNegativeInt = Annotated[int, Field(ge=0, le=MAX_INT)]
PositiveInt = Annotated[int, Field(gt=0, le=MAX_INT)]
NonNegativeFloat = Annotated[float, Field(ge=0, le=float(MAX_INT), allow_inf_nan=False)]
Ratio = Annotated[float, Field(ge=0, le=MAX_RATIO, allow_inf_nan=False)]
VcpuId = Annotated[int, Field(ge=0, lt=MAX_VCPUS)]
"""A vCPU number within one VM (0 to 4095)."""
VcpuCount = Annotated[int, Field(gt=0, le=MAX_VCPUS)]
"""A number of vCPUs of one VM (1 to 4096)."""
Text = Annotated[str, StringConstraints(pattern=NO_NUL)]
"""Free text: any characters but NUL, at most `MAX_TEXT` of them (as every string)."""
