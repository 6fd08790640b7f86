"""Placeholder: replaced below."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .joint import JointSearch


def repair(search: JointSearch, left: list[int]) -> list[int]:
    return left
