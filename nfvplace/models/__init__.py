"""Typed descriptor models (NFV-PER 001 clause 8), parsing nfvplace's own format, and `dump`.

Files in any format (and folders) are loaded by `nfvplace.load`, above the models and dialects.
"""

from .chd import ComputeHostDescriptor
from .configuration import VmConfiguration, VmConfigurations
from .loading import Descriptor, parse_document, parse_text, read_document
from .vmd import VmDescriptor
from .vnf import VnfTemplate
from .writing import dump

__all__ = [
    "ComputeHostDescriptor",
    "Descriptor",
    "VmConfiguration",
    "VmConfigurations",
    "VmDescriptor",
    "VnfTemplate",
    "dump",
    "parse_document",
    "parse_text",
    "read_document",
]
