"""OpenStack Nova scheduler plug-ins that ask an nfvplace service (`POST /v1/evaluations`).

Importable in a Nova scheduler's environment from the `nfvplace-nova` wheel
(`scripts/build_nova_plugin.py`: these modules alone, Python 3.10+): they use the standard library
only, and `NfvplaceFilter` and `NfvplaceWeigher` (which subclass Nova's
own base classes) are imported from `.scheduler` when first named, so that the translations
(`hosts`, `requests`) stay importable where Nova is not installed. See docs/integrations/nova.md.
"""

from __future__ import annotations

import importlib
from typing import Any

_SCHEDULER = ("NfvplaceFilter", "NfvplaceWeigher")


def __getattr__(name: str) -> Any:
    """`NfvplaceFilter` and `NfvplaceWeigher`, imported with Nova on first use (Nova's loader
    resolves `nfvplace.integrations.nova.NfvplaceFilter` through this)."""
    if name in _SCHEDULER:
        value = getattr(importlib.import_module(".scheduler", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["NfvplaceFilter", "NfvplaceWeigher"]
