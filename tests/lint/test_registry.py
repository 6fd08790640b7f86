"""The rule registry: stable, well-formed ids, and a table-driven test case for every rule."""

from __future__ import annotations

import re

from nfvplace.lint import ALL_RULES, RULES_BY_ID, Severity

from . import (
    test_rules_chd,
    test_rules_configuration,
    test_rules_document,
    test_rules_vmd,
    test_rules_vnf,
)

# Rules exercised by dedicated tests instead of the tables (dialect conversion, unreadable files).
TESTED_ELSEWHERE = {
    "NFV004": "tests/dialects (every dialect example reports it)",
    "NFV005": "tests/dialects/test_openstack.py::test_unknown_extra_spec_is_a_warning",
    "NFV006": "tests/dialects/test_openstack.py::test_assumptions_are_info_findings",
    "NFV009": "tests/cli/test_lint_command.py::test_binary_file_exits_2",
}


def test_ids_are_unique_and_well_formed() -> None:
    ids = [rule.id for rule in ALL_RULES]
    assert len(ids) == len(set(ids))
    assert ids == sorted(ids)
    assert all(re.fullmatch(r"NFV\d{3}", i) for i in ids)
    assert set(RULES_BY_ID) == set(ids)


def test_every_rule_has_text_a_fix_and_a_severity() -> None:
    for rule in ALL_RULES:
        assert rule.title, rule.id
        assert rule.fix, rule.id
        assert isinstance(rule.severity, Severity)


def test_every_rule_has_a_table_case() -> None:
    covered = {
        case.rule
        for module in (
            test_rules_chd,
            test_rules_configuration,
            test_rules_document,
            test_rules_vmd,
            test_rules_vnf,
        )
        for case in module.CASES
    }
    missing = {rule.id for rule in ALL_RULES} - covered - set(TESTED_ELSEWHERE)
    assert not missing, f"rules without a failing/passing case: {sorted(missing)}"
