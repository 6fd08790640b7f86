"""Reading request bodies safely: bounded size, JSON or YAML (safe loader), never a traceback."""

from __future__ import annotations

import json
import zlib

from fastapi import Request

from .. import errors
from ..dialects import sol006_xml
from ..errors import DescriptorError, Issue
from ..models.loading import (
    SourceDocument,
    check_json_shape,
    parse_problem,
    parse_text,
    too_deep,
)
from .problems import ProblemError

YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")
JSON_TYPES = ("application/json", "application/problem+json")
XML_TYPES = ("application/xml", "text/xml")
# Bodies whose type says nothing of their syntax, read by their first character (XML, JSON, else
# YAML): no type at all, and curl's `-d` default, which users send JSON with
SNIFFED_TYPES = ("", "application/x-www-form-urlencoded", "text/plain", "application/octet-stream")
XML_SOURCE = "body.xml"  # an XML body's source: findings on it give XPath paths


async def read_bytes(request: Request, limit: int | None = None) -> bytes:
    limit = limit or request.app.state.settings.max_body_bytes
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ProblemError(
                413, errors.INPUT_TOO_LARGE, f"request body is more than the {limit} bytes allowed"
            )
        chunks.append(chunk)
    return b"".join(chunks)


async def read_document(request: Request) -> SourceDocument:
    """The request body as a parsed document (JSON, or YAML when the content type says so)."""
    return parse_body(*await read_body(request))


async def read_body(request: Request) -> tuple[bytes, str]:
    """The request body and its media type (lower case, without parameters)."""
    raw = await read_bytes(request)
    return raw, request.headers.get("content-type", "").split(";")[0].strip().lower()


def gunzip(raw: bytes, limit: int) -> bytes:
    """A gzip-compressed body, decompressed to at most `limit` bytes (413 past that, 422 when it
    is not gzip)."""
    inflate = zlib.decompressobj(wbits=31)
    try:
        out = inflate.decompress(raw, limit + 1)
    except zlib.error as exc:
        raise ProblemError(
            422, errors.SERVICE_INVALID_REQUEST, f"the body is not gzip (Content-Encoding): {exc}"
        ) from exc
    if len(out) > limit:
        raise ProblemError(
            413, errors.INPUT_TOO_LARGE, f"the decompressed body is more than {limit} bytes"
        )
    return out


def syntax_of(media: str, text: str = "") -> str:
    """`json`, `yaml` or `xml`: what the media type says, else what the body looks like."""
    if media in YAML_TYPES:
        return "yaml"
    if media in XML_TYPES or media.endswith("+xml"):
        return "xml"
    if media in JSON_TYPES or media.endswith("+json"):
        return "json"
    if media not in SNIFFED_TYPES:
        raise ProblemError(
            415,
            errors.SERVICE_UNSUPPORTED_MEDIA_TYPE,
            f"content type {media!r} is not supported; send application/json, "
            "application/yaml or application/xml (SOL006)",
        )
    start = text.lstrip()[:1]
    return "xml" if start == "<" else "json" if start in ("{", "[", "") else "yaml"


def parse_body(raw: bytes, media: str) -> SourceDocument:
    """`raw` parsed as its media type says (or, for no type or curl's form type, as it looks);
    ProblemError 415 for another type."""
    syntax_of(media)  # an unsupported type is refused before its body is decoded
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DescriptorError(
            errors.INPUT_UNREADABLE, f"request body is not UTF-8 (byte {exc.start})", file="body"
        ) from exc
    syntax = syntax_of(media, text)
    if syntax == "yaml":
        return parse_text(text, "body")
    if syntax == "xml":
        return sol006_xml.parse_text(text, XML_SOURCE)
    try:
        data = json.loads(text)
    except RecursionError as exc:  # the same refusal as a YAML body nested as deep
        raise too_deep("body") from exc
    except ValueError as exc:  # also integers over 4,300 digits
        line = getattr(exc, "lineno", None)
        raise DescriptorError(
            errors.INPUT_SYNTAX,
            "request body is not valid JSON",
            file="body",
            issues=(Issue(parse_problem(exc), line=line, hint="send a JSON document"),),
        ) from exc
    check_json_shape(data, "body")  # the bounds of any document: nodes and depth
    return SourceDocument(data=data, source="body")
