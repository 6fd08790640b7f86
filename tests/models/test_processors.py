"""The processor generation table and the compatibility rule (NFV-PER 001 clause 8.2.2.1)."""

from __future__ import annotations

import pytest

from nfvplace.models.processors import (
    EXACT,
    LISTED,
    SAME_LINE,
    display_name,
    generation,
    match_rank,
    model_family,
    refusal,
    supersedes,
)

# model string -> (vendor, family, label, number, name); None: no known generation
PARSED: list[tuple[str, tuple[str, str, str, int, str] | None]] = [
    (
        "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz",
        ("Intel", "Xeon", "Xeon Scalable gen 1", 1, "Skylake"),
    ),
    (
        "Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz",
        ("Intel", "Xeon", "Xeon Scalable gen 1", 1, "Skylake"),
    ),
    (
        "Intel(R) Xeon(R) Bronze 3104 CPU @ 1.70GHz",
        ("Intel", "Xeon", "Xeon Scalable gen 1", 1, "Skylake"),
    ),
    (
        "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
        ("Intel", "Xeon", "Xeon Scalable gen 2", 2, "Cascade Lake"),
    ),
    (
        "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz",
        ("Intel", "Xeon", "Xeon Scalable gen 2", 2, "Cascade Lake"),
    ),
    (
        "Intel(R) Xeon(R) Platinum 9282 CPU @ 2.60GHz",
        ("Intel", "Xeon", "Xeon Scalable gen 2", 2, "Cascade Lake"),
    ),
    ("Intel(R) Xeon(R) Platinum 8380", ("Intel", "Xeon", "Xeon Scalable gen 3", 3, "Ice Lake")),
    (
        "Intel(R) Xeon(R) Gold 6338N CPU @ 2.20GHz",
        ("Intel", "Xeon", "Xeon Scalable gen 3", 3, "Ice Lake"),
    ),
    (
        "Intel(R) Xeon(R) Platinum 8380H CPU @ 2.90GHz",
        ("Intel", "Xeon", "Xeon Scalable gen 3", 3, "Cooper Lake"),
    ),
    ("Intel(R) Xeon(R) Gold 6438N", ("Intel", "Xeon", "Xeon Scalable gen 4", 4, "Sapphire Rapids")),
    (
        "Intel(R) Xeon(R) Platinum 8480+",
        ("Intel", "Xeon", "Xeon Scalable gen 4", 4, "Sapphire Rapids"),
    ),
    (
        "Intel(R) Xeon(R) CPU Max 9480",
        ("Intel", "Xeon", "Xeon Scalable gen 4", 4, "Sapphire Rapids"),
    ),
    (
        "INTEL(R) XEON(R) PLATINUM 8592+",
        ("Intel", "Xeon", "Xeon Scalable gen 5", 5, "Emerald Rapids"),
    ),
    ("Intel(R) Xeon(R) 6980P", ("Intel", "Xeon", "Xeon Scalable gen 6", 6, "Granite Rapids")),
    ("Intel(R) Xeon(R) 6780E", ("Intel", "Xeon", "Xeon Scalable gen 6", 6, "Sierra Forest")),
    (
        "Intel(R) Xeon(R) CPU E5-2690 v2 @ 3.00GHz",
        ("Intel", "Xeon", "Xeon E5 v2", -2, "Ivy Bridge"),
    ),
    ("Intel(R) Xeon(R) CPU E5-2699 v3 @ 2.30GHz", ("Intel", "Xeon", "Xeon E5 v3", -1, "Haswell")),
    ("Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", ("Intel", "Xeon", "Xeon E5 v4", 0, "Broadwell")),
    ("Intel(R) Xeon(R) CPU E7-8890 v4 @ 2.20GHz", ("Intel", "Xeon", "Xeon E7 v4", 0, "Broadwell")),
    (
        "Intel(R) Xeon(R) CPU E5-2650 0 @ 2.00GHz",
        ("Intel", "Xeon", "Xeon E5 v1", -3, "Sandy Bridge"),
    ),
    (
        "Intel(R) Xeon(R) CPU E7- 4870  @ 2.40GHz",
        ("Intel", "Xeon", "Xeon E7 v1", -4, "Westmere-EX"),
    ),
    (
        "Intel(R) Xeon(R) D-1548 CPU @ 2.00GHz",
        ("Intel", "Xeon D", "Xeon D gen 1", 1, "Broadwell-DE"),
    ),
    ("Intel(R) Xeon(R) D-2187NT", ("Intel", "Xeon D", "Xeon D gen 2", 2, "Skylake-D")),
    (
        "Intel(R) Xeon(R) D-2796NT CPU @ 2.00GHz",
        ("Intel", "Xeon D", "Xeon D gen 3", 3, "Ice Lake-D"),
    ),
    ("AMD EPYC 7601 32-Core Processor", ("AMD", "EPYC", "EPYC gen 1", 1, "Naples")),
    ("AMD EPYC 7502P", ("AMD", "EPYC", "EPYC gen 2", 2, "Rome")),
    ("AMD EPYC 7763 64-Core Processor", ("AMD", "EPYC", "EPYC gen 3", 3, "Milan")),
    ("AMD EPYC 9654", ("AMD", "EPYC", "EPYC gen 4", 4, "Genoa")),
    ("AMD EPYC 9754 128-Core Processor", ("AMD", "EPYC", "EPYC gen 4", 4, "Bergamo")),
    ("AMD EPYC 8534P 64-Core Processor", ("AMD", "EPYC", "EPYC gen 4", 4, "Siena")),
    ("AMD EPYC 9965 192-Core Processor", ("AMD", "EPYC", "EPYC gen 5", 5, "Turin")),
    ("Ampere Altra Q80-30", ("Ampere", "Ampere", "Ampere gen 1", 1, "Altra")),
    (
        "Ampere(R) Altra(R) Max Processor M128-30",
        ("Ampere", "Ampere", "Ampere gen 1", 1, "Altra Max"),
    ),
    ("AmpereOne A192-32X", ("Ampere", "Ampere", "Ampere gen 2", 2, "AmpereOne")),
    # no known generation: matched by family name
    ("Intel(R) Xeon(R) CPU", None),
    ("Intel(R) Xeon(R) CPU E3-1230 v5 @ 3.40GHz", None),
    ("Intel(R) Xeon(R) CPU X5670 @ 2.93GHz", None),
    ("Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", None),
    ("Intel(R) Xeon(R) Gold 6948 CPU", None),  # no 9th generation
    ("AMD EPYC 3251 8-Core Processor", None),  # embedded line
    ("AMD EPYC 7xx4", None),
    ("QEMU Virtual CPU version 2.5+", None),
    ("Hygon C86 7185 32-core Processor", None),
    ("", None),
]


@pytest.mark.parametrize(("model", "expected"), PARSED, ids=[m or "empty" for m, _ in PARSED])
def test_generation_of_real_model_names(
    model: str, expected: tuple[str, str, str, int, str] | None
) -> None:
    found = generation(model)
    if expected is None:
        assert found is None
        return
    assert found is not None
    assert (found.vendor, found.family, found.label, found.number, found.name) == expected


@pytest.mark.parametrize(
    ("model", "shown"),
    [
        ("Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", "Intel Xeon Gold 6148"),
        ("AMD EPYC 7763 64-Core Processor", "AMD EPYC 7763 64-Core"),
        ("Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", "Intel Core i7-8700"),
        ("AmpereOne A192-32X", "AmpereOne A192-32X"),
    ],
)
def test_display_name_drops_trademarks_and_clock(model: str, shown: str) -> None:
    assert display_name(model) == shown


GOLD_6148 = "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz"  # Skylake
GOLD_6248 = "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"  # Cascade Lake
GOLD_6348 = "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz"  # Ice Lake
SILVER_4310 = "Intel(R) Xeon(R) Silver 4310 CPU @ 2.10GHz"  # Ice Lake
PLATINUM_8480 = "Intel(R) Xeon(R) Platinum 8480+"  # Sapphire Rapids
E5_V4 = "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz"  # Broadwell
D_2187 = "Intel(R) Xeon(R) D-2187NT CPU @ 2.00GHz"  # Skylake-D
MILAN = "AMD EPYC 7763 64-Core Processor"
ROME = "AMD EPYC 7502P 32-Core Processor"
GENOA = "AMD EPYC 9654 96-Core Processor"
BARE_XEON = "Intel(R) Xeon(R) CPU"
UNKNOWN_GOLD = "Intel(R) Xeon(R) Gold 6948 CPU"  # no known generation, family "intel xeon gold"

# (host, reference, compatible_models, expected rank)
RULE: list[tuple[str, str, tuple[str, ...], int | None]] = [
    (GOLD_6348, GOLD_6348, (), EXACT),
    (GOLD_6348.upper(), GOLD_6348, (), EXACT),
    (GOLD_6148, GOLD_6348, (GOLD_6148,), LISTED),  # listed wins over the generation
    (PLATINUM_8480, GOLD_6348, (), SAME_LINE),  # newer generation, other tier
    (SILVER_4310, GOLD_6348, (), SAME_LINE),  # same generation, other tier
    (GOLD_6348, E5_V4, (), SAME_LINE),  # Scalable runs code built for Broadwell
    (GENOA, ROME, (), SAME_LINE),
    (MILAN, MILAN.replace("7763", "7713"), (), SAME_LINE),
    (GOLD_6148, GOLD_6348, (), None),  # older generation: the bug this table fixes
    (GOLD_6248, GOLD_6348, (), None),
    (E5_V4, GOLD_6148, (), None),
    (ROME, MILAN, (), None),
    (MILAN, GOLD_6348, (), None),  # other vendor
    (D_2187, GOLD_6148, (), None),  # other line (Xeon D), same generation age
    (GOLD_6348, D_2187, (), None),
    (UNKNOWN_GOLD, GOLD_6348, (), SAME_LINE),  # unknown: same family name
    (GOLD_6148, UNKNOWN_GOLD, (), SAME_LINE),
    (SILVER_4310, UNKNOWN_GOLD, (), None),  # unknown: family names differ
    (BARE_XEON, GOLD_6348, (), None),
    (BARE_XEON, BARE_XEON.lower(), (), EXACT),
]


@pytest.mark.parametrize(("host", "reference", "listed", "rank"), RULE)
def test_compatibility_rule(
    host: str, reference: str, listed: tuple[str, ...], rank: int | None
) -> None:
    assert match_rank(host, reference, listed) == rank
    if not listed and rank is not None:
        assert supersedes(host, reference)


def test_unknown_models_keep_the_family_rule() -> None:
    assert model_family(GOLD_6248) == "intel xeon gold"
    assert model_family(BARE_XEON) == "intel xeon"
    assert generation(UNKNOWN_GOLD) is None
    assert supersedes(UNKNOWN_GOLD, GOLD_6148)  # "intel xeon gold" both
    assert not supersedes(BARE_XEON, GOLD_6148)  # "intel xeon" != "intel xeon gold"
    assert not supersedes(BARE_XEON, "")  # no family at all: never by name


@pytest.mark.parametrize(
    ("host", "reference", "reason"),
    [
        (
            GOLD_6148,
            GOLD_6348,
            "processor Intel Xeon Gold 6148 is Skylake (Xeon Scalable gen 1); "
            "the VM needs Ice Lake (gen 3) or newer",
        ),
        (
            E5_V4,
            GOLD_6348,
            "processor Intel Xeon E5-2680 v4 is Broadwell (Xeon E5 v4); "
            "the VM needs Ice Lake (Xeon Scalable gen 3) or newer",
        ),
        (
            ROME,
            MILAN,
            "processor AMD EPYC 7502P 32-Core is Rome (EPYC gen 2); "
            "the VM needs Milan (gen 3) or newer",
        ),
        (
            MILAN,
            GOLD_6348,
            "processor AMD EPYC 7763 64-Core is Milan (EPYC gen 3), "
            "not a Xeon like the VM's Ice Lake (Xeon Scalable gen 3)",
        ),
        (PLATINUM_8480, GOLD_6348, None),  # newer: nothing to refuse
        (BARE_XEON, GOLD_6348, None),  # unknown: the table says nothing
    ],
)
def test_refusal_names_both_generations(host: str, reference: str, reason: str | None) -> None:
    assert refusal(host, reference) == reason
