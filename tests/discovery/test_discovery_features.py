"""Processor features of clause 8.1.1.1 from cpuinfo flags (the documented table)."""

from __future__ import annotations

import pytest

from nfvplace.discovery.features import FEATURE_FLAGS, features_from_flags
from nfvplace.models.capabilities import ProcessorFeature as F


@pytest.mark.parametrize(
    ("flags", "vmx_flags", "smt", "expected"),
    [
        (
            ["vmx", "ept", "vpid", "pse"],
            [],
            False,
            [F.hw_virtualization, F.slat, F.large_pages, F.tlb_tagging],
        ),
        (
            ["vmx", "ept", "pdpe1gb"],
            ["ept_1gb", "apicv"],
            True,
            [
                F.hw_virtualization,
                F.slat,
                F.slat_large_pages,
                F.large_pages,
                F.tlb_large_pages,
                F.vm_exit_reduction,
                F.smt,
            ],
        ),
        (
            ["svm", "npt", "pdpe1gb", "avic"],
            [],
            False,
            [
                F.hw_virtualization,
                F.slat,
                F.large_pages,
                F.tlb_large_pages,
                F.tlb_tagging,
                F.vm_exit_reduction,
                F.slat_large_pages,
            ],
        ),
        (["svm", "npt"], [], False, [F.hw_virtualization, F.slat, F.tlb_tagging]),
        (["fpu", "sse2"], [], False, []),
        (["dca"], [], False, [F.direct_cache_access]),
        ([], [], True, [F.smt]),
    ],
)
def test_features_from_flags(
    flags: list[str], vmx_flags: list[str], smt: bool, expected: list[F]
) -> None:
    assert list(features_from_flags(flags, vmx_flags, smt_active=smt)) == expected


def test_every_table_flag_alone_gives_its_feature() -> None:
    for feature, names in FEATURE_FLAGS.items():
        for name in names:
            assert feature in features_from_flags([name])
