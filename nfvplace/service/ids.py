"""Random ids of the service's own (request ids, placement ids)."""

from __future__ import annotations

import os


def uuid4_hex() -> str:
    """`uuid.uuid4().hex` without the `UUID` object (twice a request, the object's arithmetic
    took longer than the random bytes): 16 random bytes from `os.urandom`, the version (4) and
    the variant (RFC 4122) set in them as `uuid.UUID(bytes=..., version=4)` sets them."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return raw.hex()
