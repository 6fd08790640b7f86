"""`nfvplace discover --hwloc-xml` over several exports (files, or folders of `*.xml`): one CHD per
export, with the progress bar. Each export is read on its own: a bad one is reported (file, code,
reason) and the others are still written; the exit code is 1 if any failed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import NfvplaceError
from .progress import progress

if TYPE_CHECKING:  # loaded when discovery runs: `--help` stays quick
    from ..models.chd import ComputeHostDescriptor

Finish = Callable[["ComputeHostDescriptor"], "ComputeHostDescriptor"]


def exports_of(paths: Sequence[Path]) -> list[Path]:
    """Files as given; a folder gives every `*.xml` below it, sorted."""
    found: list[Path] = []
    for path in paths:
        found.extend(
            sorted(p for p in path.rglob("*.xml") if p.is_file()) if path.is_dir() else [path]
        )
    return found


def several(paths: Sequence[Path]) -> bool:
    return len(paths) > 1 or any(path.is_dir() for path in paths)


def _chd(path: Path, finish: Finish) -> ComputeHostDescriptor:
    from ..discovery import chd_from_hwloc_xml

    return finish(chd_from_hwloc_xml(path, host_id=None))


def discover_many(exports: Sequence[Path], out: Path | None, fmt: str, finish: Finish) -> int:
    """Write one CHD per export into the folder `out` (`<id>.<fmt>`), or all of them on stdout (a
    YAML stream, or a JSON list); returns the exit code."""
    from ..models.loading import dump

    if not exports:
        typer.echo("error [nfvplace.input.unreadable]: no *.xml export found", err=True)
        return 1
    failed = 0
    written: dict[str, Path] = {}
    texts: list[str] = []
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    for path in progress(exports, "discovering"):
        try:
            chd = _chd(path, finish)
            if chd.id in written:
                raise NfvplaceError(
                    "nfvplace.input.reference",
                    f"host id {chd.id!r} again (also from {written[chd.id]}): rename the export",
                )
            written[chd.id] = path
            text = dump(chd, fmt)
            if out is None:
                texts.append(text)
            else:
                (out / f"{chd.id}.{fmt}").write_text(text, encoding="utf-8")
        except NfvplaceError as exc:
            failed += 1
            where = "" if exc.file else f"{path}: "
            typer.echo(f"error [{exc.code}]: {where}{exc}", err=True)
        except Exception as exc:  # the edge: never a traceback, the other exports still go on
            failed += 1
            typer.echo(f"error [nfvplace.discovery.failed]: {path}: {exc!r}", err=True)
    if out is None:
        stream = (
            "[\n" + ",\n".join(t.rstrip() for t in texts) + "\n]\n"
            if fmt == "json"
            else "---\n".join(texts)
        )
        typer.echo(stream, nl=False)
    else:
        typer.echo(f"wrote {len(written)} CHDs to {out}", err=True)
    return 1 if failed else 0
