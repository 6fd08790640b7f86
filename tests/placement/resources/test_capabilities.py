"""Processor generations through the engine: an older generation of the reference's line is refused
with both generations named, a newer one is chosen, and a variant can replace the processor
requirements for the hosts it matches (NFV-PER 001 8.2.2.1 and 8.2.2.5)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import cpu_set, host, vm
from constraint_cases import Case, check

import nfvplace

SKYLAKE = "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz"
ICE_LAKE = "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz"
SAPPHIRE = "Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz"
MILAN = "AMD EPYC 7763 64-Core Processor"
ROME = "AMD EPYC 7502P 32-Core Processor"


def _ice_lake_vm(**extra: Any) -> nfvplace.VmDescriptor:
    return vm(
        cpu_sets=[cpu_set(0, 4)],
        processor={"vendor": "GenuineIntel", "model": ICE_LAKE, "reference_frequency_mhz": 2600},
        **extra,
    )


def test_only_the_newer_generation_is_chosen_and_the_older_is_told_why() -> None:
    # the Skylake host is fuller (pack's favourite) and faster: before the generation table it was
    # the same family ("intel xeon gold") at a higher clock, so it was accepted and chosen
    older = host("skylake", model=SKYLAKE, frequency=3000, used={0: "x", 16: "x"})
    newer = host("ice-lake-successor", model=SAPPHIRE, frequency=2600)
    result = nfvplace.place([older, newer], _ice_lake_vm())
    assert result.ok
    assert result.configuration.host == "ice-lake-successor"
    # the older host's reason, as `nfvplace why` finds it: the VM placed on that host alone
    alone = nfvplace.place([older], _ice_lake_vm())
    assert alone.diagnosis is not None
    (rejection,) = alone.diagnosis.rejections
    assert rejection.host == "skylake"
    assert rejection.reason == "processor_model"
    assert rejection.message.startswith(
        "processor Intel Xeon Gold 6148 is Skylake (Xeon Scalable gen 1); "
        "the VM needs Ice Lake (gen 3) or newer"
    )
    assert (
        "processor_model" in alone.diagnosis.summary or "not compatible" in alone.diagnosis.summary
    )


def test_an_older_generation_alone_fits_nowhere() -> None:
    result = nfvplace.place([host("skylake", model=SKYLAKE, frequency=3000)], _ice_lake_vm())
    assert not result.ok
    assert result.diagnosis is not None
    (rejection,) = result.diagnosis.rejections
    assert rejection.reason == "processor_model"
    assert "Skylake (Xeon Scalable gen 1)" in rejection.message
    assert "Ice Lake (gen 3)" in rejection.message


@pytest.mark.parametrize(
    ("options", "fits"),
    [
        ({}, False),
        ({"processor_match": "any"}, True),  # the model is not checked at all
        ({"frequency_scaling": True}, True),  # the explicit opt-in to slower same-vendor hosts
        ({"processor_match": "exact"}, False),
    ],
)
def test_options_still_decide_how_far_the_model_may_be(options: dict[str, Any], fits: bool) -> None:
    result = nfvplace.place(
        [host("skylake", model=SKYLAKE, frequency=3000)], _ice_lake_vm(), **options
    )
    assert result.ok is fits


def test_exact_match_refuses_a_newer_generation_too() -> None:
    result = nfvplace.place(
        [host("sapphire", model=SAPPHIRE, frequency=2600)],
        _ice_lake_vm(),
        processor_match="exact",
    )
    assert not result.ok
    assert result.diagnosis is not None
    assert result.diagnosis.rejections[0].reason == "processor_model"


def test_required_flags_are_checked_exactly_on_a_newer_generation() -> None:
    v = vm(
        cpu_sets=[cpu_set(0, 4)],
        processor={"model": ICE_LAKE, "required_flags": ["avx512_vnni"]},
    )
    result = nfvplace.place([host("sapphire", model=SAPPHIRE, frequency=2600)], v)
    assert not result.ok
    assert result.diagnosis is not None
    assert result.diagnosis.rejections[0].reason == "processor_flags"


def test_a_variant_replaces_the_processor_requirements() -> None:
    # sized on Milan; a variant for Rome hosts accepts Rome with more vCPUs
    rome_variant = {
        "name": "rome",
        "match": {"processor_models": [ROME]},
        "cpu_sets": [cpu_set(0, 6)],
        "processor": {"vendor": "AuthenticAMD", "model": ROME},
    }
    v = vm(
        cpu_sets=[cpu_set(0, 4)],
        processor={"vendor": "AuthenticAMD", "model": MILAN},
        variants=[rome_variant],
    )
    rome = host("rome", vendor="AuthenticAMD", model=ROME, frequency=2500)
    result = nfvplace.place([rome], v)
    assert result.ok, result.diagnosis and result.diagnosis.summary
    assert result.configuration.variant == "rome"
    assert len(result.configuration.cpu_sets[0].vcpu_pins) == 6
    # without the variant's processor, the Rome host is an older generation than Milan
    plain = v.model_copy(update={"variants": ()})
    refused = nfvplace.place([rome], plain)
    assert not refused.ok
    assert refused.diagnosis is not None
    assert "Rome (EPYC gen 2)" in refused.diagnosis.rejections[0].message
    assert "Milan (gen 3)" in refused.diagnosis.rejections[0].message


def test_a_variant_processor_applies_only_to_the_hosts_it_matches() -> None:
    # the variant relaxes the model for Skylake hosts; a Cascade Lake host (no variant) still needs
    # Ice Lake or newer
    v = _ice_lake_vm(
        variants=[
            {
                "name": "skylake",
                "match": {"processor_models": [SKYLAKE]},
                "processor": {"vendor": "GenuineIntel", "model": SKYLAKE},
            }
        ]
    )
    cascade_lake = "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"
    cascade = host("cascade", model=cascade_lake, frequency=3000, used={0: "x", 16: "x"})
    skylake = host("skylake", model=SKYLAKE, frequency=2400)
    result = nfvplace.place([cascade, skylake], v)
    assert result.ok
    assert result.configuration.host == "skylake"
    assert result.configuration.variant == "skylake"
    alone = nfvplace.place([cascade], v)
    assert alone.diagnosis is not None
    (rejection,) = alone.diagnosis.rejections
    assert rejection.reason == "processor_model"
    assert "Cascade Lake (Xeon Scalable gen 2)" in rejection.message


CAPS_CASES = [
    Case(
        "vendor",
        [host(vendor="AuthenticAMD", model="AMD EPYC 7763 64-Core Processor")],
        vm(processor={"vendor": "GenuineIntel"}),
        "processor_vendor",
    ),
    Case(
        "flags", [host()], vm(processor={"required_flags": ["avx512f", "amx"]}), "processor_flags"
    ),
    Case(
        "capability present but disabled",
        [host(caps=["cpu_pinning"], disabled_caps=("hugepage_numa_pinning",))],
        vm(hypervisor={"required_capabilities": ["hugepage_numa_pinning"]}),
        "capability_disabled",
        summary="have hugepage_numa_pinning present but not enabled",
    ),
    Case(
        "capability missing",
        [host(caps=["cpu_pinning"])],
        vm(hypervisor={"required_capabilities": ["cpu_pinning", "iommu"]}),
        "capability",
    ),
    Case(
        "capability set",
        [host(caps=["cpu_pinning", "slat"])],
        vm(hypervisor={"required_capability_sets": ["hw_virtualization"]}),
        "capability",
        summary="lack hypervisor capability slat_large_pages",
    ),
    Case(
        "hypervisor version",
        [host(hv_version="6.2.0")],
        vm(hypervisor={"type": "kvm", "min_version": "8.0"}),
        "hypervisor_version",
    ),
    Case("no hypervisor section", [host(hypervisor=False)], vm(), "hypervisor"),
    Case(
        "model of another family",
        [host(model="Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz", frequency=1800)],
        vm(processor={"model": "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"}),
        "processor_model",
    ),
    Case(
        "same family at the reference frequency",
        [host(model="Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", frequency=2600)],
        vm(
            processor={
                "model": "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
                "reference_frequency_mhz": 2500,
            }
        ),
    ),
    Case(
        "older generation of the same family, faster",  # Skylake for a VM sized on Ice Lake
        [host(model="Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", frequency=3000)],
        vm(
            processor={
                "model": "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz",
                "reference_frequency_mhz": 2600,
            }
        ),
        "processor_model",
    ),
    Case(
        "newer generation of another tier",  # Sapphire Rapids Platinum for an Ice Lake Gold
        [host(model="Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz", frequency=2600)],
        vm(
            processor={
                "model": "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz",
                "reference_frequency_mhz": 2600,
            }
        ),
    ),
    Case(
        "newer generation below the reference frequency",
        [host(model="Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz", frequency=2000)],
        vm(
            processor={
                "model": "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz",
                "reference_frequency_mhz": 2600,
            }
        ),
        "processor_model",
    ),
    Case(
        "frequency scaling accepts 75 % of the reference",
        [host(model="Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz", frequency=1900)],
        vm(
            processor={
                "vendor": "GenuineIntel",
                "model": "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
                "reference_frequency_mhz": 2500,
            }
        ),
        options={"frequency_scaling": True},
    ),
    Case(
        "frequency scaling below 75 %",
        [host(model="Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz", frequency=1800)],
        vm(
            processor={
                "model": "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
                "reference_frequency_mhz": 2500,
            }
        ),
        "processor_model",
        options={"frequency_scaling": True},
    ),
    Case(
        "minimum frequency",
        [host(frequency=2000)],
        vm(processor={"min_frequency_mhz": 2400}),
        "processor_frequency",
        2400,
        2000,
    ),
]


@pytest.mark.parametrize("case", CAPS_CASES, ids=[c.name for c in CAPS_CASES])
def test_capabilities_cases(case: Case) -> None:
    check(case)
