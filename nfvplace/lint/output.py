"""Machine-readable lint output: JSON (the spec's shape) and SARIF 2.1.0 (for vendors' CI)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .finding import Severity
from .findings import LintReport
from .rules import ALL_RULES

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {Severity.error: "error", Severity.warning: "warning", Severity.info: "note"}
INFORMATION_URI = "https://nfvplace.dev/lint-rules/"


def to_json(report: LintReport) -> str:
    """`[{"rule", "severity", "file", "path", "message", "line", "hint"}, ...]`."""
    return json.dumps([f.as_json() for f in report.findings], indent=2, ensure_ascii=False) + "\n"


def _uri(file: str) -> str:
    path = Path(file)
    if path.is_absolute():
        return path.as_uri()
    return quote(path.as_posix())


def _rule_name(title: str) -> str:
    """`A vCPU id appears more than once...` -> `AVcpuIdAppearsMoreThanOnce...` (SARIF rule name)."""
    words = re.findall(r"[A-Za-z0-9]+", title)
    return "".join(w[:1].upper() + w[1:] for w in words)[:64]


def sarif_document(report: LintReport, version: str) -> dict[str, Any]:
    index = {rule.id: i for i, rule in enumerate(ALL_RULES)}
    rules = [
        {
            "id": rule.id,
            "name": _rule_name(rule.title),
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": f"{rule.title}. Fix: {rule.fix}."},
            "help": {"text": rule.fix},
            "helpUri": f"{INFORMATION_URI}#{rule.id.lower()}",
            "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
            "properties": {"family": rule.family, "clause": rule.clause},
        }
        for rule in ALL_RULES
    ]
    results = []
    for finding in report.findings:
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(finding.file)}}
        if finding.line is not None and finding.line >= 1:
            physical["region"] = {"startLine": finding.line}
        location: dict[str, Any] = {"physicalLocation": physical}
        if finding.path:
            location["logicalLocations"] = [{"fullyQualifiedName": finding.path, "kind": "member"}]
        text = finding.message if not finding.hint else f"{finding.message} (fix: {finding.hint})"
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "level": SARIF_LEVEL[finding.severity],
            "message": {"text": text},
            "locations": [location],
        }
        if finding.rule in index:
            result["ruleIndex"] = index[finding.rule]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "nfvplace",
                        "version": version,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }


def to_sarif(report: LintReport, version: str = "0.1.0") -> str:
    return json.dumps(sarif_document(report, version), indent=2, ensure_ascii=False) + "\n"
