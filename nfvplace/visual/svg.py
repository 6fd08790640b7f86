"""A minimal SVG writer: escaped elements as strings, and a flow layout for boxes.

Pure functions, no dependency: the pictures are plain SVG 1.1 text that browsers, notebooks, mkdocs and
cairosvg (for PNG) all read. Colours are inline attributes (not only CSS) so every renderer agrees.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"

# State colours, close to lstopo's palette (PUs white, cores grey, NUMA nodes green-ish), with the
# four states told apart: free (white), ineligible (grey, host-reserved), dedicated (red), shared (amber).
STATE_FILL = {
    "free": "#ffffff",
    "ineligible": "#b8b8b8",
    "dedicated": "#e8836f",
    "shared": "#f3c969",
}
STATE_STROKE = "#333333"
PACKAGE_FILL = "#dedede"
NODE_FILL = "#d2e7a4"
CORE_FILL = "#bebebe"
NIC_FILL = "#e0e0e0"
MACHINE_FILL = "#f4f4f4"

# Distinct colours for the VMs drawn over a host (cycled when there are more VMs).
VM_COLOURS = (
    "#1f77b4",
    "#9467bd",
    "#17becf",
    "#2ca02c",
    "#d62728",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#ff7f0e",
    "#7f7f7f",
)


def vm_colour(index: int) -> str:
    return VM_COLOURS[index % len(VM_COLOURS)]


def attrs(**values: object) -> str:
    """`key="value"` pairs, escaped; a trailing underscore is dropped (class_), `_` becomes `-`."""
    parts = []
    for key, value in values.items():
        if value is None:
            continue
        name = key.rstrip("_").replace("_", "-")
        parts.append(f'{name}="{escape(str(value))}"')
    return " ".join(parts)


def rect(
    x: float,
    y: float,
    w: float,
    h: float,
    fill: str,
    *,
    title: str | None = None,
    stroke: str = STATE_STROKE,
    **extra: object,
) -> str:
    a = attrs(x=_n(x), y=_n(y), width=_n(w), height=_n(h), fill=fill, stroke=stroke, **extra)
    if title is None:
        return f"<rect {a}/>"
    return f"<rect {a}><title>{escape(title)}</title></rect>"


def text(
    x: float,
    y: float,
    content: str,
    *,
    size: float = 10,
    anchor: str = "start",
    weight: str | None = None,
    fill: str = "#000000",
    **extra: object,
) -> str:
    a = attrs(
        x=_n(x),
        y=_n(y),
        font_size=_n(size),
        font_family=FONT,
        text_anchor=anchor,
        font_weight=weight,
        fill=fill,
        **extra,
    )
    return f"<text {a}>{escape(content)}</text>"


# An upper bound of DejaVu Sans's advance per character, in ems (its capitals and digits are about
# 0.6-0.7 em, bold a little wider): a label cut to it never runs out of its box.
CHAR_EM = 0.64
BOLD_EM = 0.70


def fit_lines(content: str, width: float, size: float, *, bold: bool = False) -> list[str]:
    """`content` broken at spaces into lines no wider than `width` at font size `size` (a word
    longer than a line is broken inside)."""
    per_line = max(int(width / (size * (BOLD_EM if bold else CHAR_EM))), 4)
    return textwrap.wrap(content, per_line, break_long_words=True) or [""]


def fit_line(content: str, width: float, size: float) -> str:
    """`content` on one line no wider than `width`, ending in an ellipsis when cut."""
    per_line = max(int(width / (size * CHAR_EM)), 2)
    return content if len(content) <= per_line else content[: per_line - 1] + "\u2026"


def group(children: Iterable[str], **extra: object) -> str:
    a = attrs(**extra)
    body = "".join(children)
    return f"<g {a}>{body}</g>" if a else f"<g>{body}</g>"


def document(width: float, height: float, body: Iterable[str], *, title: str) -> str:
    a = attrs(
        xmlns="http://www.w3.org/2000/svg",
        width=_n(width),
        height=_n(height),
        viewBox=f"0 0 {_n(width)} {_n(height)}",
        role="img",
    )
    return (
        f"<svg {a}><title>{escape(title)}</title>"
        + rect(0, 0, width, height, "#ffffff", stroke="none")
        + "".join(body)
        + "</svg>\n"
    )


def _n(value: float) -> str:
    """A coordinate without trailing zeros (smaller files, stable text for tests)."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


@dataclass(frozen=True, slots=True)
class Box:
    """Something already drawn at the origin: its SVG and its size."""

    svg: str
    width: float
    height: float

    def at(self, x: float, y: float) -> str:
        return f'<g transform="translate({_n(x)},{_n(y)})">{self.svg}</g>'


def flow(boxes: Sequence[Box], max_width: float, gap: float) -> Box:
    """Lay boxes left to right, wrapping to a new row past `max_width` (like lstopo's auto layout)."""
    parts: list[str] = []
    x = y = row_height = width = 0.0
    for box in boxes:
        if x > 0 and x + box.width > max_width:
            x = 0.0
            y += row_height + gap
            row_height = 0.0
        parts.append(box.at(x, y))
        x += box.width + gap
        width = max(width, x - gap)
        row_height = max(row_height, box.height)
    return Box("".join(parts), width, y + row_height)
