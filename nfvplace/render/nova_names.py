"""Nova's names for what a flavor asks of a host: os-traits for CPU flags, page size spellings."""

from __future__ import annotations

from ..dialects.nova_traits import flag_trait
from ._common import page_size_name


def cpu_flag_trait(flag: str) -> str | None:
    """The os-traits name Nova's libvirt driver reports for an x86 CPU flag, or None."""
    return flag_trait(flag)


def nova_page_size(size_kib: int) -> str:
    """1048576 -> `1GB`, 2048 -> `2MB` (Nova's `hw:mem_page_size` spelling)."""
    return f"{page_size_name(size_kib)}B"
