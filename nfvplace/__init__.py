"""nfvplace: placement of NFV VMs on compute hosts, after ETSI GS NFV-PER 001 clause 8.

The stable library surface for notebooks and integrators:

- `load(path)`: a typed descriptor (or a list of them, for a folder);
- `place(hosts, vm, **policy)`: a result holding the VM Configuration, or why no host fits;
- the model classes, `dump`, and `NfvplaceError` with its stable `code`.
"""

from __future__ import annotations

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
from .reader import load

if TYPE_CHECKING:
    from .placement import PlacementResult

__version__ = "0.1.0"


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
    "dump",
    "load",
    "place",
]
