"""Findings, rules and reports: the plain values every lint rule produces."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from pydantic import BaseModel

from .. import errors, hooks
from ..errors import Issue, LintError
from ..models.loading import PathKey, format_path
from .finding import Finding, Severity


@dataclass(frozen=True, slots=True)
class Rule:
    """A lint rule: a stable id (`NFVnnn`), a severity, what it checks, and how to fix it."""

    id: str
    severity: Severity
    family: str
    title: str
    fix: str
    clause: str = ""
    code: str = errors.INPUT_INVALID
    """The stable error code (errors.py) of a refusal on this rule: the rule id says which check,
    the code says which kind of problem (the same on every surface)."""

    def hit(self, path: Sequence[str | int], message: str, hint: str | None = None) -> Hit:
        """A finding of this rule at `path` (the fix defaults to the rule's own)."""
        return Hit(self, tuple(path), message, hint if hint is not None else self.fix)


@dataclass(frozen=True, slots=True)
class Hit:
    """A rule firing on a model, before it is tied to a file and a line."""

    rule: Rule
    path: PathKey
    message: str
    hint: str | None = None

    def under(self, prefix: Sequence[str | int]) -> Hit:
        return Hit(self.rule, (*prefix, *self.path), self.message, self.hint)


@dataclass(frozen=True)
class FileResult:
    """What lint learnt about one file: its findings and the dialect it was read as."""

    file: str
    findings: tuple[Finding, ...] = ()
    kind: str | None = None
    dialect: str | None = None
    unreadable: bool = False
    model: BaseModel | None = field(default=None, compare=False, repr=False)
    """The document as the model it validated into (a dialect document: what it converts to), so
    that a door reads it through the gate once; None when it is not one, for a list of several,
    and for a dialect document that does not say everything placement needs (NFV007)."""


@dataclass(frozen=True)
class LintReport:
    """Findings over every file linted, and the counts the CLI turns into its exit code."""

    files: tuple[FileResult, ...] = field(default_factory=tuple)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for result in self.files for f in result.findings)

    def at_least(self, minimum: Severity) -> LintReport:
        """The report with only the findings of `minimum` severity or graver (the files stay)."""
        return LintReport(
            tuple(
                replace(r, findings=tuple(f for f in r.findings if f.severity.at_least(minimum)))
                for r in self.files
            )
        )

    def _repr_html_(self) -> str:
        """The findings as a table, in notebooks (`nfvplace.notebook` lends it)."""
        return cast(str, hooks.lent(hooks.FINDINGS_HTML)(self.findings, self.summary()))

    @property
    def counts(self) -> Counter[Severity]:
        return Counter(f.severity for f in self.findings)

    @property
    def unreadable(self) -> tuple[str, ...]:
        return tuple(r.file for r in self.files if r.unreadable)

    @property
    def has_errors(self) -> bool:
        return any(f.severity is Severity.error for f in self.findings)

    @property
    def exit_code(self) -> int:
        """0 clean (warnings allowed), 1 errors found, 2 a file could not be read."""
        if self.unreadable:
            return 2
        return 1 if self.has_errors else 0

    def summary(self, shown: Severity = Severity.info) -> str:
        """`N files checked: E errors, W warnings, I info`, and what `shown` leaves out."""
        counts = self.counts
        n = len(self.files)

        def plural(count: int, word: str) -> str:
            return f"{count} {word}{'' if count == 1 else 's'}"

        parts = [
            plural(counts[Severity.error], "error"),
            plural(counts[Severity.warning], "warning"),
            f"{counts[Severity.info]} info",
        ]
        text = f"{plural(n, 'file')} checked: " + ", ".join(parts)
        hidden = [
            s for s in (Severity.warning, Severity.info) if not s.at_least(shown) and counts[s]
        ]
        if hidden:
            text += (
                f" ({' and '.join(s.value for s in hidden)} not shown: "
                f"--min-severity {hidden[-1].value} shows them)"
            )
        if self.unreadable:
            text += f"; {plural(len(self.unreadable), 'file')} unreadable"
        return text


def finding_from_hit(hit: Hit, file: str, line: int | None) -> Finding:
    return Finding(
        rule=hit.rule.id,
        severity=hit.rule.severity,
        file=file,
        path=format_path(hit.path),
        message=hit.message,
        line=line,
        hint=hit.hint,
        code=hit.rule.code if hit.rule.severity is Severity.error else None,
    )


def refuse_errors(result: FileResult, what: str) -> None:
    """Raise `LintError` when `result` holds error findings; warnings and info pass."""
    bad = tuple(f for f in result.findings if f.severity is Severity.error)
    if not bad:
        return
    codes = {f.code or errors.INPUT_INVALID for f in bad}
    raise LintError(
        codes.pop() if len(codes) == 1 else errors.INPUT_INVALID,
        f"lint refuses the {what} ({len(bad)} error{'s' if len(bad) != 1 else ''}): "
        + ", ".join(sorted({f.rule for f in bad})),
        file=result.file,
        issues=tuple(
            Issue(f"{f.rule} {f.message}", path=f.path, line=f.line, hint=f.hint) for f in bad
        ),
        findings=result.findings,
    )
