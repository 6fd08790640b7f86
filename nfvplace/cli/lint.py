"""`nfvplace lint FILE...`: check descriptors (any kind, any supported dialect).

Exit codes: 0 clean (warnings allowed), 1 errors found, 2 usage error or unreadable file. The
findings shown (in every format) are those of `--min-severity` or graver, `warning` by default;
the exit code and the summary's counts are those of every finding.
"""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import __version__, errors
from ..errors import Issue, NfvplaceError
from .application import app
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


class MinSeverity(StrEnum):
    error = "error"
    warning = "warning"
    info = "info"


def _markup(text: str, style: str, console: Console | None) -> str:
    """`text` in rich markup when printing in colour, else as it is."""
    if console is None:
        return text
    from rich.markup import escape

    return f"[{style}]{escape(text)}[/{style}]" if style else escape(text)


def render_text(
    report: LintReport, console: Console | None, shown: MinSeverity = MinSeverity.info
) -> None:
    """Human output: one block per finding of `shown` severity or graver, grouped by file, then a
    summary line counting every finding. Without a console (no colour), plain lines on stdout:
    rich is then not even imported (a pre-commit hook runs lint once per file, so its start-up
    counts)."""
    from ..lint import Severity

    minimum = Severity(shown.value)

    def say(line: str) -> None:
        if console is None:
            sys.stdout.write(line + "\n")
        else:
            console.print(line, highlight=False, soft_wrap=True)

    for result in report.at_least(minimum).files:
        for finding in result.findings:
            where = f"{finding.file}:{finding.line}" if finding.line else finding.file
            severity = _markup(finding.severity.value, STYLE[finding.severity.value], console)
            path = f" {_markup(finding.path, 'bold', console)}:" if finding.path else ""
            code = f" ({finding.code})" if finding.code else ""
            rule = _markup(f"{finding.rule}{code}", "dim", console)
            message = _markup(finding.message, "", console)
            say(f"{_markup(where, '', console)}: {severity} {rule}{path} {message}")
            if finding.hint:
                say(f"    {_markup('fix:', 'green', console)} {_markup(finding.hint, '', console)}")
    counts = report.counts
    style = "bold red" if report.exit_code else ("yellow" if counts[Severity.warning] else "green")
    say(_markup(report.summary(minimum), style, console))


def _console(no_color: bool) -> Console | None:
    """A rich console when stdout is a terminal (or FORCE_COLOR is set) and colour is not turned
    off; None for plain text."""
    if use_no_color(no_color) or not (sys.stdout.isatty() or os.environ.get("FORCE_COLOR")):
        return None
    from rich.console import Console

    return Console(highlight=False)


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
    min_severity: Annotated[
        MinSeverity,
        typer.Option(
            "--min-severity",
            help="Show findings of this severity and graver, in every format (info: also what "
            "is only information, such as NFV050); the exit code counts every finding",
        ),
    ] = MinSeverity.warning,
) -> None:
    """Validate descriptors: schema and semantic rules, each finding with a rule id and a fix."""
    from ..lint import LintReport, Severity, lint_text, to_json, to_sarif
    from ..lint.files import expand_paths, lint_file

    _refuse_empty_folders(paths)
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
        sys.stdout.write(to_json(report.at_least(Severity(min_severity.value))))
    elif output_format is LintFormat.sarif:
        sys.stdout.write(to_sarif(report.at_least(Severity(min_severity.value)), __version__))
    else:
        render_text(report, _console(no_color), min_severity)
    raise typer.Exit(report.exit_code)


def _refuse_empty_folders(paths: list[Path]) -> None:
    """A folder with no descriptor file in it is a usage error (exit 2), not a clean lint."""
    from ..lint.files import folder_files

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
