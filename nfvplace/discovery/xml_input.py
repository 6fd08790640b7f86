"""Reading an XML export safely: bounded size, no DTD, no entities, no network.

Every problem is a `DiscoveryError` naming the file and what is wrong (`xml_failure`).
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from .. import errors
from ..errors import DiscoveryError, Issue
from ..xml_safety import untrusted_parser

MAX_XML_BYTES = 64 * 1024 * 1024


def xml_failure(
    source: str, message: str, hint: str | None = None, path: str = ""
) -> DiscoveryError:
    return DiscoveryError(
        errors.DISCOVERY_FAILED,
        message,
        file=source,
        issues=(Issue(message, path=path, hint=hint),) if hint else (),
    )


def read_hwloc_xml_bytes(path: str | Path) -> bytes:
    """Read a file, bounded in size; unreadable files raise DiscoveryError."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_XML_BYTES:
            raise xml_failure(
                str(path),
                f"file is {size} bytes, more than the {MAX_XML_BYTES} allowed for an hwloc XML export",
            )
        with path.open("rb") as handle:
            return handle.read(MAX_XML_BYTES + 1)
    except OSError as exc:
        raise xml_failure(str(path), f"cannot read file: {exc.strerror or exc}") from exc


def safe_root(data: bytes, source: str) -> etree._Element:
    if len(data) > MAX_XML_BYTES:
        raise xml_failure(source, f"document is larger than {MAX_XML_BYTES} bytes")
    if b"<!entity" in data.lower():
        raise xml_failure(
            source,
            "the XML declares entities, which hwloc exports never do; refused (unsafe input)",
            hint="export the topology again with `lstopo --of xml`",
        )
    try:
        root = etree.fromstring(data, untrusted_parser())
    except etree.XMLSyntaxError as exc:
        raise xml_failure(
            source,
            f"not well-formed XML: {exc.msg}",
            hint="give an hwloc XML export (`lstopo --of xml FILE`)",
            path=f"line {exc.lineno}" if exc.lineno else "",
        ) from exc
    except (ValueError, MemoryError) as exc:
        raise xml_failure(source, f"cannot parse XML: {exc}") from exc
    if root is None:
        raise xml_failure(source, "empty XML document")
    # Entities declared in an internal subset are refused even if the cheap scan above missed them.
    docinfo = root.getroottree().docinfo
    internal = docinfo.internalDTD
    if internal is not None and any(True for _ in internal.iterentities()):  # type: ignore[union-attr]
        raise xml_failure(source, "the XML declares entities; refused (unsafe input)")
    return root
