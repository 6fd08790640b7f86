"""nfvplace: placement of NFV VMs on compute hosts, after ETSI GS NFV-PER 001 clause 8.

The stable library surface for notebooks and integrators:

- `load(path)`: a typed descriptor (or a list of them, for a folder);
- `place(hosts, vm, **policy)`: a result holding the VM Configuration, or why no host fits;
- the model classes, `dump`, and `NfvplaceError` with its stable `code`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DescriptorError, LintError, NfvplaceError
from .models import (
    ComputeHostDescriptor,
    Descriptor,
    VmConfiguration,
    VmConfigurations,
    VmDescriptor,
    VnfTemplate,
    dump,
)

if TYPE_CHECKING:
    from .conversion import Converted
    from .placement import PlacementResult

__version__ = "0.1.0"


def load(path: str | Path) -> Descriptor | list[Descriptor]:
    """Load a descriptor file (nfvplace's own format or any dialect), or a folder of them.

    Raises `DescriptorError` (with a stable `code`, the file, and one issue per problem).
    """
    from .reader import load as _load

    return _load(path)


def convert(source: Any, to: str = "nfvplace", strict: bool = False) -> Converted:
    """Convert a descriptor file (path) or document in any dialect to nfvplace's format or `to`.

    See `nfvplace.conversion.convert`: the result holds the document and a finding for every
    field not carried, read with an assumption, or missing.
    """
    from .conversion import convert as _convert

    return _convert(source, to, strict)


def place(hosts: Any, vm: Any, **policy: Any) -> PlacementResult:
    """Place one VM Descriptor (or a VNF template) on the given hosts.

    The VM is linted first: raises `LintError` (with lint's findings and rule ids) for what
    `nfvplace lint` refuses. See `nfvplace.placement.place` for the policy keywords.
    """
    from .lint import lint_model, refuse_errors
    from .placement import place as _place

    refuse_errors(lint_model(vm, getattr(vm, "name", "<vm>")), "VM Descriptor or VNF template")
    return _place(hosts, vm, **policy)


__all__ = [
    "ComputeHostDescriptor",
    "Descriptor",
    "DescriptorError",
    "LintError",
    "NfvplaceError",
    "VmConfiguration",
    "VmConfigurations",
    "VmDescriptor",
    "VnfTemplate",
    "__version__",
    "convert",
    "dump",
    "load",
    "place",
]
