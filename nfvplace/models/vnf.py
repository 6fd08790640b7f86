"""VNF template (`schema: nfvplace/vnf/v1`): several VM Descriptors and the links between them.

The seed's "template file" of a VNF: each member names its VM Descriptor, inline or as a file
relative to the template, and how many instances to place.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, Literal

from pydantic import Field, model_validator

from .base import Identifier, Model, Text
from .units import Gbps
from .vmd import VmDescriptor

VNF_SCHEMA: Final = "nfvplace/vnf/v1"


class Locality(StrEnum):
    any = "any"
    same_host = "same_host"
    different_host = "different_host"


class VnfMember(Model):
    name: Identifier = Field(description="Name of this member within the VNF")
    descriptor: VmDescriptor | None = Field(None, description="The VM Descriptor, inline")
    file: Text | None = Field(
        None, description="Path of the VM Descriptor, relative to the template"
    )
    count: int = Field(1, ge=1, le=10_000, description="Instances of this member")

    @model_validator(mode="after")
    def _one_source(self) -> VnfMember:
        if self.descriptor is None and self.file is None:
            raise ValueError(
                "give 'descriptor' (inline) or 'file' (a path relative to the template)"
            )
        return self


class LinkEndpoint(Model):
    member: Identifier
    interface: Identifier


class VnfLink(Model):
    name: Identifier
    endpoints: tuple[LinkEndpoint, ...] = Field(min_length=2)
    bandwidth_gbps: Gbps | None = None
    locality: Locality = Locality.any


class AntiAffinityScope(StrEnum):
    host = "host"  # every instance of the members on a different host
    numa_node = "numa_node"  # instances may share a host, never a NUMA node


class AntiAffinityGroup(Model):
    members: tuple[Identifier, ...] = Field(min_length=1)
    scope: AntiAffinityScope = AntiAffinityScope.host


class VnfTemplate(Model):
    schema_: Literal["nfvplace/vnf/v1"] = Field(VNF_SCHEMA, alias="schema")
    name: Identifier
    description: Text | None = None
    vendor: Text | None = None
    version: Text | None = None
    members: tuple[VnfMember, ...] = Field(min_length=1)
    links: tuple[VnfLink, ...] = ()
    anti_affinity: tuple[AntiAffinityGroup, ...] = ()

    def member(self, name: str) -> VnfMember:
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(name)
