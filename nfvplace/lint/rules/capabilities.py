"""Capability rules: known names, enabled xor disabled, requirements consistent (8.1.1, 8.2.2.3), a
reference processor model of known generation (8.2.2.1) (NFV601-NFV609)."""

from __future__ import annotations

from collections.abc import Iterator

from ...models.capabilities import HypervisorCapability, ProcessorFeature
from ...models.chd import ComputeHostDescriptor
from ...models.processors import generation, model_family
from ...models.vmd import InterfaceMode, VmDescriptor
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "capabilities"

UNKNOWN_NAME = Rule(
    "NFV601",
    Severity.error,
    FAMILY,
    "A capability, capability set or processor feature name is not one nfvplace knows",
    "use a name from clause 8.1.1.1 / 8.1.1.3 (see docs/descriptors); the hint gives the closest",
    "8.1.1.3",
)
BOTH_ENABLED_AND_DISABLED = Rule(
    "NFV602",
    Severity.error,
    FAMILY,
    "A capability or feature is listed both as enabled and as disabled",
    "list it in 'capabilities' (enabled) or 'disabled_capabilities', not both",
    "8.1.1.3",
)
CAPABILITY_WITHOUT_FEATURE = Rule(
    "NFV603",
    Severity.error,
    FAMILY,
    "The hypervisor claims a capability whose processor feature is disabled in the BIOS",
    "enable the feature in the BIOS, or move the capability to 'disabled_capabilities'",
    "8.1.1.3",
)
HUGEPAGES_WITHOUT_PINNING = Rule(
    "NFV604",
    Severity.info,
    FAMILY,
    "cpu-sets use hugepages but the VM does not require hugepage_numa_pinning",
    "add hugepage_numa_pinning to hypervisor.required_capabilities",
    "8.2.2.3",
)
PASSTHROUGH_WITHOUT_IOMMU = Rule(
    "NFV605",
    Severity.info,
    FAMILY,
    "The VM has dedicated or SR-IOV interfaces but requires no IOMMU",
    "add the io_virtualization capability set (or iommu) to the hypervisor requirements",
    "8.2.2.3",
)
PINNING_NOT_REQUIRED = Rule(
    "NFV606",
    Severity.info,
    FAMILY,
    "The VM has cpu-sets (pinned vCPUs) but does not require cpu_pinning",
    "add cpu_pinning to hypervisor.required_capabilities",
    "8.2.2.3",
)
DUPLICATE_NAME = Rule(
    "NFV607",
    Severity.warning,
    FAMILY,
    "A capability, feature or flag is listed twice",
    "list it once",
    "8.1.1",
)
UNKNOWN_GENERATION = Rule(
    "NFV608",
    Severity.info,
    FAMILY,
    "The VM's reference processor model has no known generation; placement falls back to matching "
    "by family name",
    "list the other suitable models in 'compatible_models', or use a model name as /proc/cpuinfo "
    "writes it (see the generation table in docs/placement.md)",
    "8.2.2.1",
)

RULES = (
    UNKNOWN_NAME,
    BOTH_ENABLED_AND_DISABLED,
    CAPABILITY_WITHOUT_FEATURE,
    HUGEPAGES_WITHOUT_PINNING,
    PASSTHROUGH_WITHOUT_IOMMU,
    PINNING_NOT_REQUIRED,
    DUPLICATE_NAME,
    UNKNOWN_GENERATION,
)

# Hypervisor capabilities that cannot be enabled while their processor feature is off in the BIOS.
NEEDS_FEATURE: dict[HypervisorCapability, ProcessorFeature] = {
    HypervisorCapability.slat: ProcessorFeature.slat,
    HypervisorCapability.slat_large_pages: ProcessorFeature.slat_large_pages,
    HypervisorCapability.iommu: ProcessorFeature.iommu,
    HypervisorCapability.iommu_large_pages: ProcessorFeature.iommu_large_pages,
    HypervisorCapability.interrupt_remapping: ProcessorFeature.interrupt_remapping,
}

# Schema fields whose values are capability names (NFV601 instead of NFV001 for enum errors).
CAPABILITY_FIELDS = frozenset(
    {
        "capabilities",
        "disabled_capabilities",
        "required_capabilities",
        "required_capability_sets",
        "features",
        "disabled_features",
    }
)


def _duplicates(values: tuple[str, ...], path: tuple[str | int, ...], what: str) -> Iterator[Hit]:
    seen: set[str] = set()
    for pos, value in enumerate(values):
        if value in seen:
            yield DUPLICATE_NAME.hit((*path, pos), f"{what} '{value}' is listed twice")
        seen.add(value)


def check_chd(host: ComputeHostDescriptor) -> Iterator[Hit]:
    processor = host.processor
    yield from _duplicates(processor.flags, ("processor", "flags"), "flag")
    yield from _duplicates(
        tuple(f.value for f in processor.features), ("processor", "features"), "feature"
    )
    both = set(processor.features) & set(processor.disabled_features)
    for pos, feature in enumerate(processor.disabled_features):
        if feature in both:
            yield BOTH_ENABLED_AND_DISABLED.hit(
                ("processor", "disabled_features", pos),
                f"processor feature '{feature.value}' is both enabled and disabled",
            )
    hypervisor = host.hypervisor
    if hypervisor is None:
        return
    yield from _duplicates(
        tuple(c.value for c in hypervisor.capabilities),
        ("hypervisor", "capabilities"),
        "capability",
    )
    both_caps = set(hypervisor.capabilities) & set(hypervisor.disabled_capabilities)
    for pos, capability in enumerate(hypervisor.disabled_capabilities):
        if capability in both_caps:
            yield BOTH_ENABLED_AND_DISABLED.hit(
                ("hypervisor", "disabled_capabilities", pos),
                f"capability '{capability.value}' is both enabled and disabled",
            )
    disabled = set(processor.disabled_features)
    for pos, capability in enumerate(hypervisor.capabilities):
        needed = NEEDS_FEATURE.get(capability)
        if needed is not None and needed in disabled:
            yield CAPABILITY_WITHOUT_FEATURE.hit(
                ("hypervisor", "capabilities", pos),
                f"capability '{capability.value}' is enabled but processor feature "
                f"'{needed.value}' is disabled in the BIOS",
            )


def check_vmd(vm: VmDescriptor) -> Iterator[Hit]:
    required = vm.hypervisor.all_required_capabilities if vm.hypervisor else frozenset()
    if vm.hypervisor is not None:
        yield from _duplicates(
            tuple(c.value for c in vm.hypervisor.required_capabilities),
            ("hypervisor", "required_capabilities"),
            "capability",
        )
    if vm.processor is not None:
        yield from _duplicates(vm.processor.required_flags, ("processor", "required_flags"), "flag")
        model = vm.processor.model
        if model and generation(model) is None:
            family = model_family(model)
            yield UNKNOWN_GENERATION.hit(
                ("processor", "model"),
                f"processor model '{model}' has no known generation; nfvplace falls back to "
                f"matching by family name ('{family}')"
                if family
                else f"processor model '{model}' has no known generation and no family name; "
                "only the model itself and 'compatible_models' match",
            )
    if not vm.cpu_sets:
        return
    if HypervisorCapability.cpu_pinning not in required:
        yield PINNING_NOT_REQUIRED.hit(
            ("hypervisor",), f"{len(vm.cpu_sets)} cpu-set(s) but cpu_pinning is not required"
        )
    if (
        any(cs.hugepages is not None and cs.hugepages.count for cs in vm.cpu_sets)
        and HypervisorCapability.hugepage_numa_pinning not in required
    ):
        yield HUGEPAGES_WITHOUT_PINNING.hit(
            ("hypervisor",), "cpu-sets use hugepages but hugepage_numa_pinning is not required"
        )
    passthrough = [
        i.name
        for i in vm.all_interfaces
        if i.mode in (InterfaceMode.dedicated, InterfaceMode.sriov)
    ]
    if passthrough and HypervisorCapability.iommu not in required:
        yield PASSTHROUGH_WITHOUT_IOMMU.hit(
            ("hypervisor",),
            f"interface(s) {passthrough} are passed through but iommu is not required",
        )
