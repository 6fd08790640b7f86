"""What every command shares: how errors are printed, the exit codes, and where output goes.

Conventions (docs/cli.md): results on stdout, diagnostics (errors, warnings, no-fit reasons,
explanations, progress) on stderr; exit 1 for invalid input, 2 for a usage error (an unknown
`--format`, an empty folder); every error line names its stable code: `error [code]: message`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from .. import errors
from ..errors import Issue, NfvplaceError

if TYPE_CHECKING:  # the models load in the commands that need them: `--help` stays quick
    from ..models.configuration import VmConfiguration
    from ..render.result import RenderResult

EXIT_INVALID = 1
EXIT_USAGE = 2


def fail(error: NfvplaceError, exit_code: int | None = None) -> typer.Exit:
    """Print `error [code]: message` (with its issues) on stderr; raise the returned Exit.

    The exit code is the code's own in THE table (`errors.CODES`) unless one is given."""
    typer.echo(f"error [{error.code}]: {error}", err=True)
    return typer.Exit(errors.exit_code(error.code) if exit_code is None else exit_code)


def usage_error(message: str, option: str, hint: str) -> typer.Exit:
    """A usage error (exit 2) with the stable code `nfvplace.usage.invalid_option`."""
    return fail(
        NfvplaceError(
            errors.USAGE_INVALID_OPTION,
            message,
            issues=(Issue("not an accepted value", path=option, hint=hint),),
        ),
        EXIT_USAGE,
    )


def check_choice(value: str, choices: Sequence[str], option: str = "--format") -> None:
    """Refuse a value outside `choices` as a usage error (exit 2)."""
    if value not in choices:
        raise usage_error(f"unknown {option} {value!r}", option, f"use one of {', '.join(choices)}")


def no_color(flag: bool = False) -> bool:
    """Plain output when asked (`--no-color`) or when `NO_COLOR` is set to anything (no-color.org)."""
    return flag or bool(os.environ.get("NO_COLOR"))


def check_output(count: int, fmt: str, out: Path | None) -> None:
    """Before rendering: several VMs in one stdout text only where the format can hold them."""
    from ..render.several import check_joinable

    if out is None:
        try:
            check_joinable(count, fmt)
        except NfvplaceError as error:
            raise fail(error, EXIT_USAGE) from None


def warn(warnings: Sequence[str]) -> None:
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)


def write_text(target: Path, text: str) -> None:
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise NfvplaceError(
            errors.OUTPUT_UNWRITABLE,
            f"cannot write {target}: {exc.strerror or exc}",
            file=str(target),
            issues=(Issue("not writable", path="--out", hint="choose a writable path"),),
        ) from exc


def emit_rendered(
    configs: Sequence[VmConfiguration],
    results: Sequence[RenderResult],
    fmt: str,
    out: Path | None,
) -> None:
    """Write rendered configurations: stdout (one joined text), a file, or one file per VM.

    With several configurations `out` is a folder (created when missing) that gets one file per VM,
    named after its instance; with one, `out` is the file (or an existing folder to write into).
    """
    from ..render.several import join_rendered, output_name

    for result in results:
        warn(result.warnings)
    if out is None:
        typer.echo(join_rendered(results, fmt), nl=False)
        return
    if len(results) == 1 and not out.is_dir():
        write_text(out, results[0].text)
        return
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NfvplaceError(
            errors.OUTPUT_UNWRITABLE,
            f"cannot create the folder {out}: {exc.strerror or exc}",
            file=str(out),
        ) from exc
    taken: set[str] = set()
    for config, result in zip(configs, results, strict=True):
        name = output_name(config, fmt)
        stem, dot, suffix = name.rpartition(".")
        k = 1
        while name in taken:
            k += 1
            name = f"{stem}-{k}{dot}{suffix}"
        taken.add(name)
        target = out / name
        write_text(target, result.text)
        typer.echo(f"wrote {target}", err=True)
