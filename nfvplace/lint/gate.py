"""The one lint gate every door passes before placing, evaluating or counting.

`nfvplace.place`, `capacity` and `evaluate`, `Fleet.place`, the CLI's `place` and `capacity`, and the
service's routes call `gate`: what `nfvplace lint` refuses, no door places. Given the parsed document
a descriptor was read from, the findings are the file's own (with lines, unit spellings and a
dialect's notes), exactly what `nfvplace lint FILE` prints; given only a model, its semantic findings.
"""

from __future__ import annotations

from pydantic import BaseModel

from ..models.loading import SourceDocument
from .engine import check_document, lint_model
from .findings import refuse_errors
from .rules.vnf import Resolver


def gate(
    descriptor: BaseModel,
    what: str,
    *,
    document: SourceDocument | None = None,
    resolve: Resolver | None = None,
) -> None:
    """Raise `LintError` (lint's findings and rule ids) when lint refuses `descriptor`."""
    if document is not None:
        result = check_document(document, resolve)
    else:
        result = lint_model(descriptor, getattr(descriptor, "name", None) or "<vm>")
    refuse_errors(result, what)


__all__ = ["gate"]
