"""ETSI SOL006 YANG instance data written as XML (`<vnfd xmlns="urn:etsi:nfv:yang:etsi-nfv-vnfd">`,
or `<nfv xmlns="urn:etsi:nfv:yang:etsi-nfv-descriptors">` holding `<vnfd>` entries).

The XML is parsed safely (no entities, no DTD, no network, bounded size) into the same plain data
as SOL006 JSON/YAML (YANG lists become lists, identity values lose their `nfv:` prefix), with the
source line of every element, and the SOL006 reader (`osm`) converts it. Findings on an XML file
name the element by XPath (`/vnfd/vdu[1]/virtual-compute-desc`).
"""

from __future__ import annotations

from typing import Any

from .. import errors
from ..errors import DescriptorError, Issue
from ..models.loading import PathKey, SourceDocument
from ..xml_safety import untrusted_parser

MAX_XML_BYTES = 8 * 1024 * 1024
MAX_ELEMENTS = 200_000
NAMESPACES = ("urn:etsi:nfv:yang:etsi-nfv-vnfd", "urn:etsi:nfv:yang:etsi-nfv-descriptors")
YANG_LISTS = frozenset(
    {
        "vnfd",
        "vdu",
        "virtual-compute-desc",
        "virtual-storage-desc",
        "sw-image-desc",
        "int-cpd",
        "ext-cpd",
        "int-virtual-link-desc",
        "df",
        "vdu-profile",
        "instantiation-level",
        "vdu-level",
        "affinity-or-anti-affinity-group",
        "virtual-network-interface-requirements",
        "network-interface-requirements",
        "vdu-cpu-requirements",
        "vdu-memory-requirements",
        "logical-node",
        "requirement-detail",
        "layer-protocol",
        "scaling-aspect",
        "lcm-operations-configuration",
    }
)
"""YANG lists of the SOL006 VNFD: lists even with one entry (an element of that name without
children is a reference leaf, such as a VDU's `virtual-compute-desc`)."""


def looks_like_xml(text: str) -> bool:
    return text.lstrip().startswith("<")


def _fail(source: str, message: str, line: int | None = None) -> DescriptorError:
    return DescriptorError(
        errors.INPUT_SYNTAX,
        message,
        file=source,
        issues=(Issue(message, line=line, hint="give SOL006 XML instance data (a <vnfd>)"),),
    )


def _root(data: bytes, source: str) -> Any:
    from lxml import etree

    if len(data) > MAX_XML_BYTES:
        raise _fail(source, f"document is larger than {MAX_XML_BYTES} bytes")
    if b"<!entity" in data.lower() or b"<!doctype" in data.lower():
        raise _fail(source, "the XML declares a DTD or entities; refused (unsafe input)")
    try:
        root = etree.fromstring(data, untrusted_parser())
    except etree.XMLSyntaxError as exc:
        raise _fail(source, f"not well-formed XML: {exc.msg}", exc.lineno) from exc
    except (ValueError, MemoryError) as exc:
        raise _fail(source, f"cannot parse XML: {exc}") from exc
    if root is None:
        raise _fail(source, "empty XML document")
    return root


def _local(tag: Any) -> str:
    from lxml import etree

    return str(etree.QName(tag).localname) if isinstance(tag, str) else ""


def _value(element: Any) -> str:
    text = (element.text or "").strip()
    prefix, sep, rest = text.partition(":")
    if sep and prefix in (element.nsmap or {}) and rest:
        return rest  # an identityref such as nfv:ethernet
    return text


def _convert(element: Any, path: PathKey, lines: dict[PathKey, int], budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError(f"more than {MAX_ELEMENTS} elements")
    lines.setdefault(path, element.sourceline or 0)
    children = [c for c in element if isinstance(c.tag, str)]
    if not children:
        return _value(element)
    out: dict[str, Any] = {}
    for child in children:
        name = _local(child.tag)
        is_list = name in YANG_LISTS and any(isinstance(c.tag, str) for c in child)
        if is_list or (name in out and isinstance(out[name], list)):
            lines.setdefault((*path, name), child.sourceline or 0)
            items = out.setdefault(name, [])
            if not isinstance(items, list):
                items = out[name] = [items]
            items.append(_convert(child, (*path, name, len(items)), lines, budget))
        elif name in out:
            out[name] = [out[name], _convert(child, (*path, name, 1), lines, budget)]
        else:
            out[name] = _convert(child, (*path, name), lines, budget)
    return out


def parse_text(text: str, source: str = "<string>") -> SourceDocument:
    """SOL006 XML as plain data: `{"etsi-nfv-vnfd:vnfd": {...}}` or `{"nfv": {"vnfd": [...]}}`."""
    from lxml import etree

    root = _root(text.encode("utf-8", "surrogatepass"), source)
    name = _local(root.tag)
    namespace = etree.QName(root.tag).namespace
    lines: dict[PathKey, int] = {}
    key = f"etsi-nfv-vnfd:{name}" if namespace == NAMESPACES[0] else name
    try:
        body = _convert(root, (key,), lines, [MAX_ELEMENTS])
    except ValueError as exc:
        raise _fail(source, f"cannot read the XML: {exc}") from exc
    lines[()] = root.sourceline or 1
    return SourceDocument(data={key: body}, source=source, lines=lines)


def xpath(path: PathKey) -> str:
    """`("etsi-nfv-vnfd:vnfd", "vdu", 0, "id")` -> `/vnfd/vdu[1]/id` (XPath counts from 1)."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step + 1}]"
        else:
            out += "/" + str(step).rpartition(":")[2]
    return out or "/"
