"""nfvplace: placement of NFV VMs on compute hosts, after ETSI GS NFV-PER 001 clause 8.

The stable library surface for notebooks and integrators:

- `load(path)`: a typed descriptor (or a list of them, for a folder);
- `convert(path_or_document, to=...)`: a vendor dialect's descriptor in nfvplace's format, or back out;
- `place(hosts, vm, **policy)`: a result holding the VM Configuration, or why no host fits;
- `Fleet(hosts)`: the hosts being placed on, for many placements: `fleet.place(vm)` places and
  claims, `fleet.release(result)` gives back, `fleet.hosts` is every host's current descriptor;
- `capacity(hosts, vm)`: how many more instances of a VM fit, host by host (read-only);
- the model classes, `dump`, and `NfvplaceError` with its stable `code`.

Names are imported when first used, so that `import nfvplace` (and every command's start-up) stays
cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import hooks
from .errors import DescriptorError, LintError, NfvplaceError

if TYPE_CHECKING:
    from .conversion import convert
    from .fleet import Fleet
    from .models import (
        ComputeHostDescriptor,
        Descriptor,
        VmConfiguration,
        VmConfigurations,
        VmDescriptor,
        VnfTemplate,
        dump,
    )
    from .placement import CapacityReport, HostEvaluation, PlacementResult
    from .reader import load

__version__ = "0.1.0"


def _lend_to_core_objects() -> None:
    from . import notebook  # noqa: F401  (lends pictures and graphs to core objects on import)


hooks.provide_with(_lend_to_core_objects)

_LAZY = {
    "ComputeHostDescriptor": "models",
    "Descriptor": "models",
    "VmConfiguration": "models",
    "VmConfigurations": "models",
    "VmDescriptor": "models",
    "VnfTemplate": "models",
    "dump": "models",
    "load": "reader",
    "Fleet": "fleet",
    "convert": "conversion",
}


def __getattr__(name: str) -> Any:
    """The public names above, and any submodule (`nfvplace.models`), imported on first use."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("_"):
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def place(hosts: Any, vm: Any, **policy: Any) -> PlacementResult:
    """Place one VM Descriptor (or a VNF template) on the given hosts.

    The VM (each VM of a batch) is linted first: raises `LintError` (with lint's findings and rule
    ids) for what `nfvplace lint` refuses. See `nfvplace.placement.place` for the policy keywords.
    """
    from .lint import gate
    from .placement import BatchItem
    from .placement import place as _place

    for item in vm if isinstance(vm, list | tuple) else (vm,):
        gate(item.vm if isinstance(item, BatchItem) else item, "VM Descriptor or VNF template")
    return _place(hosts, vm, **policy)


def capacity(hosts: Any, vm: Any, **policy: Any) -> CapacityReport:
    """How many more instances of a VM Descriptor fit on the hosts, on which, and what runs out first.

    The VM is linted first, as by `place`: raises `LintError` for what `nfvplace lint` refuses.
    See `nfvplace.placement.capacity`.
    """
    from .lint import gate
    from .placement import capacity as _capacity

    gate(vm, "VM Descriptor")
    return _capacity(hosts, vm, **policy)


def evaluate(hosts: Any, vm: Any, **policy: Any) -> tuple[HostEvaluation, ...]:
    """Every host's answer for one VM Descriptor, without claiming: fits, score, reasons and the
    configuration it would get (what a Nova filter or a Kubernetes scheduler extender asks).

    The VM is linted first, as by `place`: raises `LintError` for what `nfvplace lint` refuses.
    See `nfvplace.placement.evaluate`.
    """
    from .lint import gate
    from .placement import evaluate as _evaluate

    gate(vm, "VM Descriptor")
    return _evaluate(hosts, vm, **policy)


__all__ = [
    "ComputeHostDescriptor",
    "Descriptor",
    "DescriptorError",
    "Fleet",
    "LintError",
    "NfvplaceError",
    "VmConfiguration",
    "VmConfigurations",
    "VmDescriptor",
    "VnfTemplate",
    "__version__",
    "capacity",
    "convert",
    "dump",
    "evaluate",
    "load",
    "place",
]
