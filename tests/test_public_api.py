"""The public surface is what we mean to export, and nothing else (`nfvplace.__all__`)."""

from __future__ import annotations

import nfvplace
import nfvplace.dialects
import nfvplace.lint
import nfvplace.models


def test_top_level_all() -> None:
    assert sorted(nfvplace.__all__) == [
        "ComputeHostDescriptor",
        "Descriptor",
        "DescriptorError",
        "Fleet",
        "LintError",
        "NfvplaceError",
        "VmConfiguration",
        "VmConfigurations",
        "VmDescriptor",
        "VnfTemplate",
        "__version__",
        "capacity",
        "convert",
        "dump",
        "evaluate",
        "load",
        "place",
    ]
    for name in nfvplace.__all__:
        assert hasattr(nfvplace, name), name


def test_lint_all() -> None:
    expected = {
        "ALL_RULES",
        "RULES_BY_ID",
        "FileResult",
        "Finding",
        "LintError",
        "LintReport",
        "Rule",
        "Severity",
        "check_document",
        "gate",
        "lint_document",
        "lint_file",
        "lint_model",
        "lint_paths",
        "lint_text",
        "refuse_errors",
        "to_json",
        "to_sarif",
    }
    assert set(nfvplace.lint.__all__) == expected
    assert all(hasattr(nfvplace.lint, name) for name in expected)


def test_dialects_all() -> None:
    assert {"detect", "convert", "DIALECT_NAMES"} <= set(nfvplace.dialects.__all__)
    assert all(hasattr(nfvplace.dialects, name) for name in nfvplace.dialects.__all__)
    # Files are read by nfvplace.reader, above the dialects (no dialects <-> reader cycle).
    assert not {"load_any", "load_document"} & set(nfvplace.dialects.__all__)


def test_one_load() -> None:
    """`nfvplace.load` (the reader's, every format) is the only public `load`."""
    assert nfvplace.load is nfvplace.reader.load
    assert not {"load", "load_file"} & set(nfvplace.models.__all__)
    assert not hasattr(nfvplace.models, "load")
