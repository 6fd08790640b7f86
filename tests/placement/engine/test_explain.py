"""The summary line and the lazily built rejections."""

from __future__ import annotations

from collections import Counter

from nfvplace.placement.engine.explain import Reasons, RejectionList, summary_line
from nfvplace.placement.result import Rejection


def test_summary_line_sorted_by_count_then_phrase() -> None:
    counts = Counter({"lack a free VF on a ≥ 25 Gbps port": 40, "have no SMT": 40, "b": 80})
    assert summary_line(120, 0, counts) == (
        "0/120 hosts fit: 80 b, 40 have no SMT, 40 lack a free VF on a ≥ 25 Gbps port"
    )
    assert summary_line(0, 0, Counter()) == "0/0 hosts fit: no host given"


def test_rejections_are_built_once_on_first_access() -> None:
    calls = []

    def build() -> list[Rejection]:
        calls.append(1)
        return [Rejection("h2", "smt", "m", "s"), Rejection("h1", "smt", "m", "s")]

    reasons = Reasons()
    reasons.add("have no SMT", 2, build)
    diagnosis = reasons.diagnosis(2, 0)
    assert calls == []
    assert diagnosis.summary == "0/2 hosts fit: 2 have no SMT"
    assert isinstance(diagnosis.rejections, RejectionList)
    assert [r.host for r in diagnosis.rejections] == ["h1", "h2"]
    assert len(diagnosis.rejections) == 2
    assert calls == [1]
    assert diagnosis.to_dict()["rejections"][0]["host"] == "h1"  # type: ignore[index]
