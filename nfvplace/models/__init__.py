"""Typed descriptor models (NFV-PER 001 clause 8) and their loading."""

from .chd import ComputeHostDescriptor
from .configuration import VmConfiguration, VmConfigurations
from .loading import Descriptor, dump, load, load_file, parse_document, parse_text, read_document
from .vmd import VmDescriptor
from .vnf import VnfTemplate

__all__ = [
    "ComputeHostDescriptor",
    "Descriptor",
    "VmConfiguration",
    "VmConfigurations",
    "VmDescriptor",
    "VnfTemplate",
    "dump",
    "load",
    "load_file",
    "parse_document",
    "parse_text",
    "read_document",
]
