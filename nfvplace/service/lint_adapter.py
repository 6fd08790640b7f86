"""Lint findings for a request body, as the JSON objects the API returns.

The same rules and the same words as `nfvplace lint` (`nfvplace.lint.lint_document`), so the CLI, the
library and the API agree.
"""

from __future__ import annotations

from typing import Any

from ..lint import lint_document
from ..models.loading import SourceDocument


def lint_findings(document: SourceDocument) -> list[dict[str, Any]]:
    """Findings as `{"rule", "severity", "file", "path", "message", "line", "hint"}`."""
    return [finding.as_json() for finding in lint_document(document)]
