"""What every dialect importer returns: our document, where each part came from, and what was lost."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models.loading import PathKey

DROPPED = "dropped"
"""A source field that bears on placement and that nfvplace cannot say: not carried."""
ASSUMED = "assumed"
"""A source field carried with an assumption (a default, or the nearest thing nfvplace can say)."""
MISSING = "missing"
"""Something placement needs that the file does not say (a flavor by name, a `${...}` placeholder)."""
NOTE_KINDS = (DROPPED, ASSUMED, MISSING)


@dataclass(frozen=True)
class Note:
    """Something of the source that was not carried, read with an assumption, or is missing.

    `path` is the path in the source document (shown as a JSON pointer or an XPath); `kind` is one
    of `NOTE_KINDS`. `--strict` turns every note into an error.
    """

    path: PathKey
    message: str
    kind: str = DROPPED


@dataclass(frozen=True)
class Conversion:
    """A vendor document converted to an nfvplace document (plain data, not yet validated).

    `origins` maps a path in the converted document to the path in the source it came from, so that
    findings on the converted descriptor point at the vendor's own file and line.
    """

    dialect: str
    data: dict[str, Any]
    origins: Mapping[PathKey, PathKey] = field(default_factory=dict)
    notes: tuple[Note, ...] = ()

    def origin_of(self, path: Sequence[str | int]) -> PathKey:
        """Source path of the deepest prefix of `path` that has one (the root otherwise)."""
        return deepest_origin(path, self.origins, self.origins.get((), ()))


def deepest_origin(
    path: Sequence[str | int], origins: Mapping[PathKey, PathKey], default: PathKey
) -> PathKey:
    """The source of the deepest prefix of `path` that `origins` knows (`default` if none)."""
    key = tuple(path)
    while key:
        if key in origins:
            return origins[key]
        key = key[:-1]
    return default


def vnf_template(name: str, members: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A VNF template of `members` (each a member entry: name, descriptor, and perhaps count)."""
    return {"schema": "nfvplace/vnf/v1", "name": name, "members": list(members)}


def members_of(descriptors: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One member entry a VM Descriptor, named as the VM."""
    return [{"name": d["name"], "descriptor": d} for d in descriptors]


def nest_origins(
    origins: dict[PathKey, PathKey], prefix: PathKey, vm_origins: Mapping[PathKey, PathKey]
) -> None:
    """Put one VM's origins under `prefix`, its place in the converted document."""
    for key, source in vm_origins.items():
        origins[(*prefix, *key)] = source


class DialectError(ValueError):
    """The document looks like the dialect but cannot be converted; the message says why."""

    def __init__(self, message: str, path: PathKey = ()) -> None:
        super().__init__(message)
        self.path = path


def one_of(value: Any, accepted: Sequence[str], what: str, path: PathKey) -> str:
    """`value` lowercased when it is one of `accepted`, else a DialectError listing them."""
    text = str(value).strip().lower()
    if text not in accepted:
        raise DialectError(
            f"{what} must be one of {', '.join(repr(a) for a in accepted)}, got {value!r}", path
        )
    return text


def json_pointer(path: Sequence[str | int]) -> str:
    """`("a", 0, "b/c")` -> `/a/0/b~1c` (RFC 6901)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def is_placeholder(value: Any) -> bool:
    """A template placeholder such as `${memory int}`: a value the file does not give yet."""
    return isinstance(value, str) and "${" in value


def placeholder_paths(data: Any, path: PathKey = ()) -> list[PathKey]:
    """Every `${...}` value of a document, as source paths (the `${}` index of a template aside)."""
    if isinstance(data, Mapping):
        return [
            found
            for key, value in data.items()
            if key != "${}"  # a template's own list of its placeholders
            for found in ([(*path, key)] if is_placeholder(key) else [])
            + placeholder_paths(value, (*path, key))
        ]
    if isinstance(data, list):
        return [
            found for i, item in enumerate(data) for found in placeholder_paths(item, (*path, i))
        ]
    return [path] if is_placeholder(data) else []


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def parse_int(value: Any, what: str, path: PathKey) -> int:
    """An integer from a number or a numeric string, or a DialectError naming the field."""
    if isinstance(value, bool):
        raise DialectError(f"{what} must be a number, got {value!r}", path)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise DialectError(f"{what} must be a whole number, got {value!r}", path)


MAX_COUNT = 4096
"""Largest vCPU, node or thread count a dialect may ask for (guards against absurd inputs)."""


def parse_count(value: Any, what: str, path: PathKey, limit: int = MAX_COUNT) -> int:
    """A whole number between 0 and `limit`, or a DialectError naming the field."""
    number = parse_int(value, what, path)
    if not 0 <= number <= limit:
        raise DialectError(f"{what} must be between 0 and {limit}, got {number}", path)
    return number


def parse_cpu_list(text: Any, what: str, path: PathKey) -> list[int]:
    """`"0-3,6,^2"` -> `[0, 1, 3, 6]`, the syntax of Nova's `hw:numa_cpus.N` and Linux cpulists."""
    if isinstance(text, int) and not isinstance(text, bool):
        return [text]
    if not isinstance(text, str):
        raise DialectError(f"{what} must be a CPU list such as '0-3,6', got {text!r}", path)
    include: list[int] = []
    exclude: set[int] = set()
    for raw in text.split(","):
        part = raw.strip()
        if not part:
            continue
        target: list[int] | set[int] = include
        if part.startswith("^"):
            part = part[1:].strip()
            target = exclude
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if hi < lo or hi - lo > 4096:
                    raise ValueError
                values = list(range(lo, hi + 1))
            else:
                values = [int(part)]
        except ValueError:
            raise DialectError(f"{what}: '{raw.strip()}' is not a CPU or range", path) from None
        if isinstance(target, set):
            target.update(values)
        else:
            target.extend(values)
    return [v for v in dict.fromkeys(include) if v not in exclude]


def identifier(value: Any, fallback: str) -> str:
    """A name usable as an nfvplace identifier (letters, digits, . _ : @ / -)."""
    import re

    text = re.sub(r"[^A-Za-z0-9._:@/-]+", "-", str(value) if value is not None else "").strip("-")
    if not text or not text[0].isalnum():
        text = f"{fallback}-{text}".strip("-") if text else fallback
    return text[:253]


Page = int | str | None
"""A page size as the VM Descriptor says it: KiB, a word chosen on the host node (`large`,
`any`), or None (normal memory, small pages)."""


def page_size(value: Any, path: PathKey = ()) -> Page:
    """Nova/OSM page size words and sizes: `large` (OSM `LARGE`) and `any` (OSM `PREFER_LARGE`)
    stay words, `2MB` is 2048 KiB, `small` is None."""
    text = str(value).strip().lower() if value is not None else ""
    if text == "large":
        return "large"
    if text in ("any", "prefer_large"):
        return "any"
    return page_size_kib(value, path)


def hugepages_of(page: Page, memory_mib: int) -> dict[str, object] | None:
    """A cpu-set's `hugepages` for its whole memory in `page` (None: normal memory)."""
    if isinstance(page, str):
        return {"size": page}
    if not page:
        return None
    return {"size": f"{page}KiB", "count": memory_mib * 1024 // page}


def page_size_kib(value: Any, path: PathKey = ()) -> int | None:
    """Nova/OSM page sizes in KiB: `2MB` -> 2048, `small` -> None (words: `page_size`).

    A size must be a power of two of at least 4 KiB (the sizes MMUs have): `3MB` is refused.
    """
    from ..models.units import QuantityError, parse_memory_kib

    if value is None:
        return None
    text = str(value).strip().lower().replace("size_", "")
    if text in ("small", "4kb", "4k", "4096"):
        return None
    words = "use 'small', 'large', 'any' or a power-of-two size such as '2MB' or '1GB'"
    try:
        kib = parse_memory_kib(text, "kib")
    except QuantityError:
        raise DialectError(f"page size {value!r} is not a page size: {words}", path) from None
    if kib < 4 or kib & (kib - 1):
        raise DialectError(f"page size {value!r} is not a page size: {words}", path)
    return kib if kib > 4 else None
