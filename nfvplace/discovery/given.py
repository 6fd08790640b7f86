"""Facts an hwloc export cannot know, given by hand: `--set KEY=VALUE` and `--defaults FILE`.

A key is a path into the CHD with `[N]` for one list item and `[*]` for every item
(`hypervisor.type`, `processor.flags`, `numa_nodes[*].nics[*].ports[*].speed_gbps`,
`numa_nodes[0].memory.hugepages[*].used`); a value is text (`25`, `kvm`) or a YAML list or
mapping (`[avx2, avx512f]`).
Defaults fill only what the CHD does not already say (or lists under `provenance.unknown`);
`--set` overrides. Each fact applied is recorded in `provenance.notes` with where it came from,
and its path leaves `provenance.unknown`. Pure: data in, data out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from .. import errors
from ..errors import Issue, NfvplaceError

_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\*|\d+)\]")


@dataclass(frozen=True)
class Fact:
    """One hand-given fact: the key, its value, where it came from, and whether it overrides."""

    key: str
    value: Any
    origin: str
    override: bool = True


def _fail(key: str, message: str, origin: str) -> NfvplaceError:
    return NfvplaceError(
        errors.INPUT_INVALID,
        f"{origin}: {key}: {message}",
        issues=(Issue(message, path=key, hint="use a CHD path such as hypervisor.type"),),
    )


def parse_steps(key: str, origin: str) -> list[str | int | None]:
    """`a.b[0].c[*]` -> `["a", "b", 0, "c", None]` (None: every item)."""
    steps: list[str | int | None] = []
    position = 0
    for match in _STEP.finditer(key):
        gap = key[position : match.start()]
        if gap not in ("", ".") or (gap == "" and match.group(1) and steps):
            raise _fail(key, f"cannot read the key at '{key[position:]}'", origin)
        name, index = match.groups()
        steps.append(name if name else (None if index == "*" else int(index)))
        position = match.end()
    if not steps or position != len(key) or not isinstance(steps[0], str):
        raise _fail(key, "not a CHD path (e.g. numa_nodes[*].nics[*].ports[*].speed_gbps)", origin)
    return steps


def parse_set(text: str) -> Fact:
    """`KEY=VALUE` from the command line."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise _fail(text, "give --set KEY=VALUE", "--set")
    try:  # a list or mapping is YAML; a scalar stays text (the model reads "25" as a number)
        value = yaml.safe_load(raw) if raw.strip()[:1] in ("[", "{") else raw.strip()
    except yaml.YAMLError as exc:
        raise _fail(key, f"the value is not YAML: {exc}", "--set") from None
    return Fact(key.strip(), value, "--set")


def defaults_facts(data: Any, origin: str) -> list[Fact]:
    """Facts from a defaults file: a mapping of KEY: VALUE (the same keys as --set)."""
    if not isinstance(data, Mapping):
        raise _fail("", "a defaults file is a mapping of KEY: VALUE", origin)
    return [Fact(str(key), value, origin, override=False) for key, value in data.items()]


def _absent(value: Any) -> bool:
    return value is None or value == "unknown" or value == [] or value == ()


def _assign(node: Any, steps: Sequence[str | int | None], fact: Fact, unknown: bool) -> int:
    """Set the fact at every place `steps` leads to; the number of places set."""
    step, rest = steps[0], steps[1:]
    if isinstance(step, str):
        if not isinstance(node, dict):
            return 0
        if not rest:
            if fact.override or unknown or _absent(node.get(step)):
                node[step] = fact.value
                return 1
            return 0
        child = node.setdefault(step, {} if isinstance(rest[0], str) else [])
        return _assign(child, rest, fact, unknown)
    if not isinstance(node, list):
        return 0
    items = node if step is None else node[step : step + 1]
    return sum(_assign(item, rest, fact, unknown) for item in items) if rest else 0


def apply_facts(chd: Mapping[str, Any], facts: Sequence[Fact]) -> tuple[dict[str, Any], list[str]]:
    """The CHD data with the facts applied, and a warning for each fact that set nothing."""
    import copy

    data = copy.deepcopy(dict(chd))
    provenance = data.setdefault("provenance", {})
    unknown = list(provenance.get("unknown", []))
    notes = list(provenance.get("notes", []))
    warnings = []
    for fact in facts:
        steps = parse_steps(fact.key, fact.origin)
        generic = re.sub(r"\[\d+\]", "[*]", fact.key)
        was_unknown = fact.key in unknown or generic in unknown
        count = _assign(data, steps, fact, was_unknown)
        if not count:
            warnings.append(
                f"{fact.origin}: {fact.key} set nothing (no such item, or already known and "
                "defaults never override)"
            )
            continue
        unknown = [
            u for u in unknown if u not in (fact.key, generic) and not generic.startswith(u + ".")
        ]
        notes.append(f"{fact.key} = {fact.value!r} from {fact.origin} ({count} place(s))")
    provenance["unknown"] = unknown
    provenance["notes"] = notes
    return data, warnings
