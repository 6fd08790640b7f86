"""The rule registry: every lint rule, one module per family, and the checks per document kind."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.vmd import VmDescriptor
from ..findings import Hit, Rule
from . import (
    cache,
    capabilities,
    configuration,
    cpu,
    document,
    floating,
    information,
    interfaces,
    memory,
    pci,
    topology,
    variants,
    vnf,
)

ALL_RULES: tuple[Rule, ...] = tuple(
    sorted(
        (
            *document.RULES,
            *cpu.RULES,
            *floating.RULES,
            *memory.RULES,
            *interfaces.RULES,
            *topology.RULES,
            *pci.RULES,
            *capabilities.RULES,
            *cache.RULES,
            *vnf.RULES,
            *configuration.RULES,
            *variants.RULES,
            *information.RULES,
        ),
        key=lambda rule: rule.id,
    )
)
RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in ALL_RULES}

VMD_CHECKS: tuple[Callable[[VmDescriptor], Iterable[Hit]], ...] = (
    cpu.check_vmd,
    floating.check_vmd,
    memory.check_vmd,
    interfaces.check_vmd,
    pci.check_vmd,
    capabilities.check_vmd,
    information.check_vmd,
)
CHD_CHECKS: tuple[Callable[[ComputeHostDescriptor], Iterable[Hit]], ...] = (
    topology.check_chd,
    memory.check_chd,
    interfaces.check_chd,
    pci.check_chd,
    capabilities.check_chd,
    cache.check_chd,
    information.check_chd,
)
CONFIGURATION_CHECKS: tuple[Callable[[VmConfiguration], Iterable[Hit]], ...] = (
    configuration.check_configuration,
    pci.check_configuration,
)


def check_vmd(vm: VmDescriptor) -> Iterator[Hit]:
    for check in VMD_CHECKS:
        yield from check(vm)
    yield from variants.check_vmd(vm, VMD_CHECKS)


def check_chd(host: ComputeHostDescriptor) -> Iterator[Hit]:
    for check in CHD_CHECKS:
        yield from check(host)


def check_configuration(config: VmConfiguration) -> Iterator[Hit]:
    for check in CONFIGURATION_CHECKS:
        yield from check(config)


__all__ = [
    "ALL_RULES",
    "RULES_BY_ID",
    "check_chd",
    "check_configuration",
    "check_vmd",
]
