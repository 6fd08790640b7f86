"""The linter's file edge: read files and folders, resolve VNF member files, gather a report."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import DescriptorError
from ..models.loading import (
    DESCRIPTOR_SUFFIXES,
    MemberOutsideError,
    iter_descriptor_files,
    member_path,
)
from ..models.vmd import VmDescriptor
from ..reader import load_document, read_path
from .engine import check_document, error_result
from .findings import FileResult, LintReport
from .rules.vnf import Outside, Resolver


def file_resolver(base: Path, kept: dict[Path, VmDescriptor] | None = None) -> Resolver:
    """Loads VNF member files relative to `base` (the template's folder). Each member it loads
    is also put into `kept` (by its path), so a caller that places the template after linting it
    reads no member file twice."""

    def resolve(relative: str) -> VmDescriptor | str:
        try:
            path = member_path(base, relative)
            loaded = load_document(read_path(path))
        except MemberOutsideError as exc:
            return Outside(exc.message)
        except DescriptorError as exc:
            first = exc.issues[0] if exc.issues else None
            detail = f" ({first.path}: {first.message})" if first and first.path else ""
            return f"{exc.message}{detail} [{exc.code}]"
        if not isinstance(loaded, VmDescriptor):
            return "is not a VM Descriptor"
        if kept is not None:
            kept[path] = loaded
        return loaded

    return resolve


def lint_file(path: str | Path) -> FileResult:
    """Lint one file; an unreadable file gives an NFV009 finding and `unreadable=True`."""
    path = Path(path)
    try:
        document = read_path(path)
    except DescriptorError as exc:
        return error_result(exc, str(path))
    return check_document(document, file_resolver(path.parent))


LINT_SUFFIXES = (*DESCRIPTOR_SUFFIXES, ".xml")
"""What lint picks up in a folder: nfvplace's own suffixes and the XML of vendor dialects."""


def folder_files(folder: Path) -> list[Path]:
    """The files lint checks under a folder (sorted, hidden entries skipped); each is reported."""
    return list(iter_descriptor_files(folder, LINT_SUFFIXES))


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """The files to lint: files as given, folders replaced by every descriptor file below them."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(folder_files(path))
        else:
            out.append(path)
    return out


def lint_paths(paths: Iterable[str | Path]) -> LintReport:
    """Lint files and folders (every .yaml/.yml/.json/.xml below a folder), in the order given."""
    return LintReport(tuple(lint_file(path) for path in expand_paths(paths)))
