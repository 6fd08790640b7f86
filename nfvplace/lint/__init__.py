"""`nfvplace lint`: schema and semantic checks of descriptors, each finding with a stable rule id.

The core is pure: `lint_document(SourceDocument) -> list[Finding]`. `lint_paths` is the file edge.
Rules live one family per module under `nfvplace.lint.rules`; `ALL_RULES` lists them all.
"""

from ..errors import LintError
from .engine import check_document, lint_document, lint_model, lint_text
from .files import lint_file, lint_paths
from .finding import Finding, Severity
from .findings import FileResult, LintReport, Rule, refuse_errors
from .gate import gate
from .output import to_json, to_sarif
from .rules import ALL_RULES, RULES_BY_ID

__all__ = [
    "ALL_RULES",
    "RULES_BY_ID",
    "FileResult",
    "Finding",
    "LintError",
    "LintReport",
    "Rule",
    "Severity",
    "check_document",
    "gate",
    "lint_document",
    "lint_file",
    "lint_model",
    "lint_paths",
    "lint_text",
    "refuse_errors",
    "to_json",
    "to_sarif",
]
