"""Turning parsed documents into typed models, and files of nfvplace's own format into descriptors.

Reading text is `source` (safe YAML/JSON with lines), the kinds are `kinds`, readable validation
errors are `validation`, writing back is `writing`; this module re-exports their names, which the
rest of nfvplace imports from here.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from .. import errors
from ..errors import DescriptorError, Issue
from .kinds import KINDS, Descriptor, kind_of, model_for
from .source import (
    MAX_DEPTH,
    MAX_NODES,
    PathKey,
    SourceDocument,
    check_json_shape,
    format_path,
    parse_problem,
    parse_text,
    parse_text_fast,
    read_document,
    too_deep,
)
from .validation import error_location, validation_issues
from .vmd import VmDescriptor
from .vnf import VnfTemplate
from .writing import dump

DESCRIPTOR_SUFFIXES = (".yaml", ".yml", ".json")


def parse_document(document: SourceDocument) -> Descriptor:
    """Validate a parsed document into its model; raises DescriptorError naming every problem."""
    model = model_for(document.data, document.source)
    try:
        parsed = model.model_validate(document.data)
    except ValidationError as exc:
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"invalid {kind_of(document.data)} document",
            file=document.source,
            issues=validation_issues(exc, model, document),
        ) from exc
    assert isinstance(parsed, Descriptor)
    return parsed


def _load_own(path: Path) -> Descriptor:
    return parse_document(read_document(path))


class MemberOutsideError(DescriptorError):
    """A VNF member's file lies outside the template's folder."""


def member_path(base: Path, file: str) -> Path:
    """The member file `file` of a template in the folder `base`. Raises MemberOutsideError
    (`nfvplace.input.reference`) when it lies outside that folder (an absolute path, `..` above
    it, a link out of it): a template must not make nfvplace open files elsewhere on the machine
    (`file: ../../../../etc/passwd`)."""
    target = (base / file).resolve()
    if Path(file).is_absolute() or not target.is_relative_to(base.resolve()):
        raise MemberOutsideError(
            errors.INPUT_REFERENCE,
            f"{file} lies outside the template's folder ({base}); not opened",
            issues=(
                Issue(
                    "outside the template's folder",
                    hint="copy the file into the template's folder (or one below it) and give "
                    "its path relative to the template, e.g. members/du.yaml",
                ),
            ),
        )
    return target


def resolve_members(
    template: VnfTemplate,
    base: Path,
    source: str,
    load_member: Callable[[Path], Descriptor] = _load_own,
) -> VnfTemplate:
    """The template with each member given as a file (relative to `base`) loaded inline."""
    members = []
    for index, member in enumerate(template.members):
        if member.descriptor is None and member.file is not None:
            try:
                loaded = load_member(member_path(base, member.file))
            except DescriptorError as exc:
                raise DescriptorError(
                    errors.INPUT_REFERENCE,
                    f"member '{member.name}' refers to {member.file}, which cannot be loaded",
                    file=source,
                    issues=(
                        Issue(
                            str(exc),
                            path=f"members[{index}].file",
                            hint=exc.issues[0].hint
                            if isinstance(exc, MemberOutsideError)
                            else "fix the path or the file",
                        ),
                    ),
                ) from exc
            if not isinstance(loaded, VmDescriptor):
                raise DescriptorError(
                    errors.INPUT_REFERENCE,
                    f"member '{member.name}' refers to {member.file}, which is not a VM Descriptor",
                    file=source,
                    issues=(Issue("wrong kind", path=f"members[{index}].file"),),
                )
            member = member.model_copy(update={"descriptor": loaded})
        members.append(member)
    return template.model_copy(update={"members": tuple(members)})


def iter_descriptor_files(
    folder: Path, suffixes: Sequence[str] = DESCRIPTOR_SUFFIXES
) -> Iterator[Path]:
    """Descriptor files under a folder (by suffix), sorted, skipping hidden entries."""
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and path.suffix.lower() in suffixes:
            yield path


def parse_own_file(path: str | Path) -> Descriptor:
    """Parse one file in nfvplace's own format; VNF template members given as files are parsed too.

    Internal: the public loader is `nfvplace.load` (`nfvplace.reader.load`), which also reads every
    vendor dialect and folders; it sits above the models.
    """
    path = Path(path)
    descriptor = parse_document(read_document(path))
    if isinstance(descriptor, VnfTemplate):
        descriptor = resolve_members(descriptor, path.parent, str(path))
    return descriptor


_FREEZING = {"on": False}  # set by `frozen_from_now`: this process keeps long-lived objects frozen


def frozen_from_now() -> None:
    """Freeze what is alive now (`gc.freeze`), and say that this process keeps its long-lived
    objects frozen from now on: `gc_paused(lasting=True)` then freezes what its work keeps too,
    instead of handing every frozen object back to the collector (`_aged`). The caller has just
    collected, so that no garbage is kept. Asked once set, as `gc.get_freeze_count` walks every
    frozen object (20-30 ms at a million)."""
    gc.freeze()
    _FREEZING["on"] = True


@contextmanager
def gc_paused(*, lasting: bool = False) -> Iterator[None]:
    """Cyclic garbage collection paused while many descriptors are built.

    A fleet's descriptors are hundreds of thousands of small objects and hold no reference cycles;
    collecting again and again while they pile up costs several times the loading itself.

    `lasting`: what the work leaves alive is kept (a cold evaluation's held hosts, rows and
    answers: about 180 objects a host). Resumed as it was, the collector's next young collection
    would walk all of it, and a middle one again (40-60 ms each at 1,000 hosts), to find no garbage.
    They go to the oldest generation instead (`_aged`), unwalked until a full collection.
    """
    was_enabled = gc.isenabled()
    freezing = _FREEZING["on"]
    if lasting and was_enabled and freezing:
        gc.collect(1)  # the young garbage, before `_aged` keeps whatever is alive
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if lasting:
                _aged(freezing)
            gc.enable()


def _aged(freezing: bool) -> None:
    """Every object the collector tracks moved out of its young generations, without walking them.
    A process that keeps nothing frozen: to the oldest generation (`freeze` then `unfreeze`), where
    full collections still find any garbage (and the few hundred constant tuples the interpreter
    froze as it started go there too). A process that keeps its long-lived objects frozen
    (`nfvplace serve`'s workers, `frozen_from_now`) would see `unfreeze` hand them all back: there
    they join the frozen ones, still freed by their reference counts (a held host replaced); a
    reference cycle that became garbage since the young collection before the work (in another
    thread) is kept, as the workers' own freezing keeps one."""
    gc.freeze()
    if not freezing:
        gc.unfreeze()


__all__ = [
    "DESCRIPTOR_SUFFIXES",
    "KINDS",
    "MAX_DEPTH",
    "MAX_NODES",
    "Descriptor",
    "MemberOutsideError",
    "PathKey",
    "SourceDocument",
    "check_json_shape",
    "dump",
    "error_location",
    "format_path",
    "frozen_from_now",
    "gc_paused",
    "iter_descriptor_files",
    "kind_of",
    "member_path",
    "parse_document",
    "parse_own_file",
    "parse_problem",
    "parse_text",
    "parse_text_fast",
    "read_document",
    "resolve_members",
    "too_deep",
    "validation_issues",
]
