"""Variant rules: per-processor/hypervisor requirement lists (clause 8.2.2.5, last paragraph) (NFV901-NFV909)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ...models.vmd import VARIANT_OVERRIDES, Variant, VmDescriptor
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "variants"
CLAUSE = "8.2.2.5"

NAME_DUPLICATE = Rule(
    "NFV901",
    Severity.error,
    FAMILY,
    "Two variants have the same name",
    "give every variant its own name",
    CLAUSE,
)
MATCHES_EVERYTHING = Rule(
    "NFV902",
    Severity.warning,
    FAMILY,
    "A variant's 'match' is empty, so it applies to every host",
    "say which processors or hypervisors the variant is for",
    CLAUSE,
)
SAME_MATCH = Rule(
    "NFV903",
    Severity.warning,
    FAMILY,
    "Two variants have the same 'match', so the second can never be chosen",
    "make the matches differ, or merge the variants",
    CLAUSE,
)
CHANGES_NOTHING = Rule(
    "NFV904",
    Severity.info,
    FAMILY,
    "A variant overrides no requirement",
    "give the requirement lists that differ for the matched hosts",
    CLAUSE,
)

INVALID_WHEN_APPLIED = Rule(
    "NFV905",
    Severity.error,
    FAMILY,
    "The descriptor with the variant applied is not a valid VM Descriptor",
    "make the variant's fields valid together with the descriptor's own",
    CLAUSE,
)

RULES = (NAME_DUPLICATE, MATCHES_EVERYTHING, SAME_MATCH, CHANGES_NOTHING, INVALID_WHEN_APPLIED)


def check_vmd(
    vm: VmDescriptor, checks: Iterable[Callable[[VmDescriptor], Iterable[Hit]]] = ()
) -> Iterator[Hit]:
    """Variant rules, then every VMD check run on the descriptor with each variant applied.

    Hits found with a variant applied are reported under `variants[i]` when they concern a field
    the variant overrides; hits the base descriptor has too are not repeated.
    """
    checks = tuple(checks)
    names: dict[str, int] = {}
    matches: dict[str, int] = {}
    # what the base descriptor has itself: every check run on it again, so only when a variant
    # is applied (a descriptor without variants was linted twice, half of the gate's time)
    base_hits: set[tuple[str, tuple[str | int, ...], str]] | None = None
    for index, variant in enumerate(vm.variants):
        path = ("variants", index)
        if variant.name in names:
            yield NAME_DUPLICATE.hit(
                (*path, "name"), f"variant '{variant.name}' is also variants[{names[variant.name]}]"
            )
        names.setdefault(variant.name, index)
        match_key = variant.match.model_dump_json(exclude_defaults=True)
        if match_key == "{}":
            yield MATCHES_EVERYTHING.hit(
                (*path, "match"), f"variant '{variant.name}' matches every host"
            )
        elif match_key in matches:
            yield SAME_MATCH.hit(
                (*path, "match"),
                f"variant '{variant.name}' has the same match as variants[{matches[match_key]}]",
            )
        matches.setdefault(match_key, index)
        overridden = [f for f in VARIANT_OVERRIDES if getattr(variant, f) is not None]
        if not overridden:
            yield CHANGES_NOTHING.hit(path, f"variant '{variant.name}' overrides nothing")
            continue
        if base_hits is None:
            base_hits = {(h.rule.id, h.path, h.message) for check in checks for h in check(vm)}
        yield from _applied(vm, variant, index, overridden, checks, base_hits)


def _applied(
    vm: VmDescriptor,
    variant: Variant,
    index: int,
    overridden: list[str],
    checks: tuple[Callable[[VmDescriptor], Iterable[Hit]], ...],
    base_hits: set[tuple[str, tuple[str | int, ...], str]],
) -> Iterator[Hit]:
    try:
        applied = VmDescriptor.model_validate(vm.with_variant(variant).model_dump(by_alias=True))
    except ValueError as exc:
        yield INVALID_WHEN_APPLIED.hit(
            ("variants", index), f"variant '{variant.name}' gives an invalid descriptor: {exc}"
        )
        return
    for check in checks:
        for hit in check(applied):
            if (hit.rule.id, hit.path, hit.message) in base_hits:
                continue
            message = f"with variant '{variant.name}': {hit.message}"
            if hit.path and hit.path[0] in overridden:
                yield Hit(hit.rule, ("variants", index, *hit.path), message, hit.hint)
            else:
                yield Hit(hit.rule, hit.path, message, hit.hint)
