"""One finding, the plain value every lint rule ends as: rule id, severity, where, what and the fix.

It imports nothing of nfvplace, so that `errors.LintError` can carry findings while lint's rules
import `errors` (no import cycle).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    error = "error"
    warning = "warning"
    info = "info"

    def at_least(self, minimum: Severity) -> bool:
        """True when this severity is `minimum` or graver (error > warning > info)."""
        order = (Severity.info, Severity.warning, Severity.error)
        return order.index(self) >= order.index(minimum)


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem in one file: rule id, severity, where (field path and line), what and how to fix."""

    rule: str
    severity: Severity
    file: str
    path: str
    message: str
    line: int | None = None
    hint: str | None = None
    code: str | None = None
    """The stable error code of an error finding (`None` for warnings and info)."""

    def as_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "code": self.code,
            "severity": self.severity.value,
            "file": self.file,
            "path": self.path,
            "message": self.message,
            "line": self.line,
            "hint": self.hint,
        }
