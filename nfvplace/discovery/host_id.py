"""A valid CHD id from what a host is called (its host name, or an export's file name)."""

from __future__ import annotations

import re

_NOT_ID = re.compile(r"[^A-Za-z0-9._:@/-]+")


def default_host_id(candidate: str | None, fallback: str = "host") -> str:
    """A valid CHD id from a host name or a file stem."""
    text = _NOT_ID.sub("-", candidate or "").strip("-._:@/")[:253]
    return text or fallback
