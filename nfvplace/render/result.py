"""What every renderer returns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RenderResult:
    """The rendered text and, for each requirement the target cannot express exactly, a warning."""

    text: str
    warnings: tuple[str, ...] = ()
