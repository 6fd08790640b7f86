"""`nfvplace lint FILE...`: check descriptors (any kind, any supported dialect).

Exit codes: 0 clean (warnings allowed), 1 errors found, 2 usage error or unreadable file.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import __version__, errors
from ..errors import Issue, NfvplaceError
from . import app
from .common import EXIT_USAGE, fail
from .common import no_color as use_no_color
from .progress import progress

if TYPE_CHECKING:  # imported in the functions, so that `nfvplace --help` stays quick
    from rich.console import Console

    from ..lint import LintReport

STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


class LintFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"


def render_text(report: LintReport, console: Console) -> None:
    """Human output: one block per finding, grouped by file, then a summary line."""
    from rich.markup import escape

    from ..lint import Severity

    for result in report.files:
        for finding in result.findings:
            where = f"{finding.file}:{finding.line}" if finding.line else finding.file
            style = STYLE[finding.severity.value]
            path = f" [bold]{escape(finding.path)}[/bold]:" if finding.path else ""
            code = f" ({finding.code})" if finding.code else ""
            console.print(
                f"{escape(where)}: [{style}]{finding.severity.value}[/{style}] "
                f"[dim]{finding.rule}{code}[/dim]{path} {escape(finding.message)}",
                highlight=False,
                soft_wrap=True,
            )
            if finding.hint:
                console.print(
                    f"    [green]fix:[/green] {escape(finding.hint)}",
                    highlight=False,
                    soft_wrap=True,
                )
    counts = report.counts
    style = "bold red" if report.exit_code else ("yellow" if counts[Severity.warning] else "green")
    console.print(f"[{style}]{escape(report.summary())}[/{style}]", highlight=False)


@app.command("lint")
def lint_command(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Descriptor files or folders (every .yaml/.yml/.json/.xml below them); - for stdin"
        ),
    ],
    output_format: Annotated[
        LintFormat,
        typer.Option("--format", "-f", help="text (coloured), json or sarif (SARIF 2.1.0)"),
    ] = LintFormat.text,
    no_color: Annotated[
        bool, typer.Option("--no-color", help="Plain text output (also when NO_COLOR is set)")
    ] = False,
) -> None:
    """Validate descriptors: schema and semantic rules, each finding with a rule id and a fix."""
    from ..lint import LintReport, lint_text, to_json, to_sarif
    from ..lint.files import expand_paths, folder_files, lint_file

    empty = [p for p in paths if p.is_dir() and not folder_files(p)]
    if empty:
        raise fail(
            NfvplaceError(
                errors.USAGE_NO_DESCRIPTORS,
                f"no descriptors found in {', '.join(map(str, empty))}",
                issues=(
                    Issue(
                        "empty folder",
                        path="PATH",
                        hint="give files, or a folder with .yaml, .yml, .json or .xml files",
                    ),
                ),
            ),
            EXIT_USAGE,
        )
    try:
        targets: list[Path | None] = []  # None: standard input
        for path in paths:
            targets.extend([None] if str(path) == "-" else expand_paths([path]))
        results = [
            lint_text(sys.stdin.read(), "<stdin>") if target is None else lint_file(target)
            for target in progress(targets, "linting")
        ]
        report = LintReport(tuple(results))
    except Exception as exc:  # the edge: never a traceback, whatever the input
        typer.echo(f"nfvplace lint: internal error: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None
    if output_format is LintFormat.json:
        sys.stdout.write(to_json(report))
    elif output_format is LintFormat.sarif:
        sys.stdout.write(to_sarif(report, __version__))
    else:
        from rich.console import Console

        console = Console(no_color=use_no_color(no_color), highlight=False)
        render_text(report, console)
    raise typer.Exit(report.exit_code)
