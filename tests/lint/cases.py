"""Helpers for table-driven rule tests: a failing and a passing document per rule.

The failing document marks the line the finding must point at with a trailing `#<` comment.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from nfvplace.lint import Finding, Severity, lint_text
from nfvplace.lint.rules.vnf import Resolver

MARK = "#<"


@dataclass(frozen=True)
class Case:
    rule: str
    path: str
    bad: str
    good: str

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.path or 'document'}"


def findings(text: str, resolve: Resolver | None = None) -> tuple[Finding, ...]:
    return lint_text(textwrap.dedent(text), "case.yaml", resolve).findings


def marked_line(text: str) -> int:
    lines = textwrap.dedent(text).splitlines()
    marked = [n for n, line in enumerate(lines, start=1) if line.rstrip().endswith(MARK)]
    assert len(marked) == 1, f"mark exactly one line with {MARK}"
    return marked[0]


def check(case: Case, resolve: Resolver | None = None) -> None:
    bad = findings(case.bad, resolve)
    hits = [f for f in bad if f.rule == case.rule]
    assert hits, f"{case.rule} did not fire; got {[(f.rule, f.path, f.message) for f in bad]}"
    assert case.path in [f.path for f in hits], [f.path for f in hits]
    finding = next(f for f in hits if f.path == case.path)
    assert finding.line == marked_line(case.bad), finding
    assert finding.message
    assert finding.hint
    good = findings(case.good, resolve)
    assert not [f for f in good if f.rule == case.rule], good
    errors = [f for f in good if f.severity is Severity.error]
    assert not errors, errors
