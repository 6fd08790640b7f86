"""The Topology Manager port against the kubelet's own test tables: `cases.json` is translated
mechanically from k8s.io/kubernetes v1.34.2 `pkg/kubelet/cm/topologymanager/policy_test.go`,
`policy_none_test.go` and `policy_single_numa_node_test.go` (tests/data/kubernetes/topologymanager:
`translate.py`), and every case is checked here as the kubelet's `TestPolicy*Merge`,
`TestMaxOfMinAffinityCounts`, `TestCompareHintsNarrowest` and `TestPolicySingleNumaNodeFilterHints`
check it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nfvplace.integrations.kubernetes.hints import (
    BEST_EFFORT,
    NONE,
    RESTRICTED,
    SINGLE_NUMA_NODE,
    Hint,
    HintMerger,
    NumaInfo,
    _single_numa_hints,
    mask_of,
    merge,
)

CASES = json.loads(
    (
        Path(__file__).parents[1] / "data" / "kubernetes" / "topologymanager" / "cases.json"
    ).read_text()
)
FOUR = NumaInfo(
    (0, 1, 2, 3),
    {
        0: {0: 10, 1: 11, 2: 12, 3: 12},
        1: {0: 11, 1: 10, 2: 12, 3: 12},
        2: {0: 12, 1: 12, 2: 10, 3: 11},
        3: {0: 12, 1: 12, 2: 11, 3: 10},
    },
)
_ROWS = [
    [10, 11, 12, 12, 30, 30, 30, 30],
    [11, 10, 12, 12, 30, 30, 30, 30],
    [12, 12, 10, 11, 30, 30, 30, 30],
    [12, 12, 11, 10, 30, 30, 30, 30],
    [30, 30, 30, 30, 10, 11, 12, 12],
    [30, 30, 30, 30, 11, 10, 12, 12],
    [30, 30, 30, 30, 12, 12, 10, 11],
    [30, 30, 30, 30, 12, 12, 13, 10],
]
EIGHT = NumaInfo(tuple(range(8)), {i: dict(enumerate(row)) for i, row in enumerate(_ROWS)})

# the kubelet's TestPolicy*Merge: (policy, NUMA info, prefer closest, suites of cases)
TESTS = {
    "TestPolicyBestEffortMerge": (
        BEST_EFFORT,
        FOUR,
        False,
        ("common/4", "best-effort/4", "no-policies/4"),
    ),
    "TestPolicyBestEffortMergeClosestNUMA": (
        BEST_EFFORT,
        EIGHT,
        True,
        ("common/8", "best-effort/8", "closest/8"),
    ),
    "TestPolicyRestrictedMerge": (
        RESTRICTED,
        FOUR,
        False,
        ("common/4", "best-effort/4", "no-policies/4"),
    ),
    "TestPolicyRestrictedMergeClosestNUMA": (
        RESTRICTED,
        EIGHT,
        True,
        ("common/8", "best-effort/8", "closest/8"),
    ),
    "TestPolicySingleNumaNodeMerge": (
        SINGLE_NUMA_NODE,
        FOUR,
        False,
        ("common/4", "single-numa-node/4"),
    ),
}


def _hint(raw: dict[str, Any]) -> Hint:
    mask = raw["mask"]
    return Hint(None if mask is None else mask_of(mask), raw["preferred"])


def _providers(raw: list[Any]) -> list[Any]:
    return [
        None
        if p is None
        else {r: None if h is None else [_hint(x) for x in h] for r, h in p.items()}
        for p in raw
    ]


MERGE = [
    pytest.param(policy, numa, closest, case, id=f"{test}: {case['name']}")
    for test, (policy, numa, closest, suites) in TESTS.items()
    for suite in suites
    for case in CASES["merge"][suite]
]


def test_the_tables_are_all_there() -> None:
    assert len(MERGE) == 28 * 2 + 30 * 2 + 21  # as many cases as the kubelet's five tests run
    assert CASES["source"].startswith("k8s.io/kubernetes v1.34.2")


@pytest.mark.parametrize(("policy", "numa", "closest", "case"), MERGE)
def test_policy_merge(policy: str, numa: NumaInfo, closest: bool, case: dict[str, Any]) -> None:
    hint, _ = merge(policy, numa, _providers(case["providers"]), closest)
    assert hint == _hint(case["expected"])


@pytest.mark.parametrize("case", CASES["none"], ids=lambda c: c["name"])
def test_policy_none_merge(case: dict[str, Any]) -> None:
    hint, admit = merge(NONE, FOUR, _providers(case["providers"]))
    assert (hint, admit) == (_hint(case["expected"]), case["admit"])


@pytest.mark.parametrize(
    ("policy", "preferred", "admit"),
    [
        (BEST_EFFORT, False, True),  # TestPolicyBestEffortCanAdmitPodResult
        (RESTRICTED, False, False),  # TestPolicyRestrictedCanAdmitPodResult
        (RESTRICTED, True, True),
        (SINGLE_NUMA_NODE, False, False),  # TestPolicySingleNumaNodeCanAdmitPodResult
        (NONE, False, True),
    ],
)
def test_can_admit_pod_result(policy: str, preferred: bool, admit: bool) -> None:
    provider = {"cpu": [Hint(mask_of([0, 1]), preferred)]}
    assert merge(policy, NumaInfo((0, 1)), [provider])[1] is admit


@pytest.mark.parametrize("case", CASES["max_of_min"])
def test_max_of_min_affinity_counts(case: dict[str, Any]) -> None:
    hints = [[_hint(h) for h in resource] for resource in case["hints"]]
    assert (
        HintMerger(NumaInfo(()), hints, BEST_EFFORT, False).best_non_preferred == case["expected"]
    )


@pytest.mark.parametrize("case", CASES["compare"], ids=lambda c: c["name"])
def test_compare_hints_narrowest(case: dict[str, Any]) -> None:
    merger = HintMerger(NumaInfo(()), [], BEST_EFFORT, False)
    merger.best_non_preferred = case["best_non_preferred"]
    current = None if case["current"] is None else _hint(case["current"])
    candidate = _hint(case["candidate"])
    result = merger.compare(current, candidate)
    assert result is (current if case["expected"] == "current" else candidate)


@pytest.mark.parametrize("case", CASES["single_numa_filter"], ids=lambda c: c["name"])
def test_single_numa_node_filter_hints(case: dict[str, Any]) -> None:
    hints = [[_hint(h) for h in resource] for resource in case["hints"]]
    expected = [[_hint(h) for h in resource] for resource in case["expected"]]
    assert _single_numa_hints(hints) == expected
