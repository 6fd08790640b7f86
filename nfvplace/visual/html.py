"""HTML tables for notebooks (`_repr_html_`) and the web view: a diagnosis, lint findings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..lint.finding import Finding
    from ..placement.result import Diagnosis

STYLE = "border-collapse:collapse;font-family:sans-serif;font-size:12px"
CELL = "border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top"


def table(
    caption: str, header: Sequence[str], rows: Iterable[Sequence[object]], **attrs: str
) -> str:
    """A plain HTML table, every cell escaped (`None` shows as empty)."""
    extra = "".join(f' {k.rstrip("_").replace("_", "-")}="{escape(v)}"' for k, v in attrs.items())
    head = "".join(f'<th style="{CELL}">{escape(h)}</th>' for h in header)
    body = "".join(
        "<tr>"
        + "".join(f'<td style="{CELL}">{"" if c is None else escape(str(c))}</td>' for c in row)
        + "</tr>"
        for row in rows
    )
    return (
        f'<table style="{STYLE}"{extra}><caption style="text-align:left;font-weight:bold">'
        f"{escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def diagnosis_html(diagnosis: Diagnosis) -> str:
    """Why no host fits: the one-line summary, then one row per rejected host."""
    rows = (
        (r.host, r.reason, r.message, r.requested, r.available, r.stage)
        for r in diagnosis.rejections
    )
    header = ("host", "reason", "why", "requested", "available", "stage")
    return table(diagnosis.summary, header, rows, class_="diagnosis")


def findings_html(findings: Sequence[Finding], summary: str) -> str:
    """Lint findings: one row per finding, in the order lint reported them."""
    rows = (
        (
            f.severity.value,
            f.rule,
            f.file + (f":{f.line}" if f.line else ""),
            f.path,
            f.message,
            f.hint,
        )
        for f in findings
    )
    header = ("severity", "rule", "file", "field", "message", "fix")
    return table(summary, header, rows, class_="findings")
