"""One vocabulary: one table of codes (errors.CODES, documented in docs/errors.md), the same code for
the same problem on every surface (lint, the CLI, the library, the REST API), one class per name."""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

import nfvplace
from nfvplace import errors
from nfvplace.claims import ClaimConflictError
from nfvplace.cli import _register, app
from nfvplace.service.app import create_app
from nfvplace.service.problems import error_status
from nfvplace.service.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

_register()
ROOT = Path(__file__).resolve().parents[1]
FLEET = str(ROOT / "examples" / "fleet")
SYNTAX = "schema: nfvplace/vmd/v1\nname: [unclosed\n"
SCHEMA = "schema: nfvplace/vmd/v1\nname: vm\nvcpus: 2\nmemory_mib: 1024\nvcpu: 3\n"
CASES = {
    "syntax": (SYNTAX, "NFV000", errors.INPUT_SYNTAX),
    "schema": (SCHEMA, "NFV001", errors.INPUT_INVALID),
}


def _constants() -> set[str]:
    return {
        v
        for k, v in vars(errors).items()
        if k.isupper() and isinstance(v, str) and v.startswith("nfvplace.")
    }


def test_every_code_is_in_the_one_table_and_documented() -> None:
    assert _constants() == set(errors.CODES)
    documented = set(
        re.findall(r"`(nfvplace\.[a-z_]+\.[a-z_]+)`", (ROOT / "docs" / "errors.md").read_text())
    )
    assert documented == set(errors.CODES)


def test_every_lint_rule_carries_a_code_of_the_table() -> None:
    from nfvplace.lint import ALL_RULES

    assert {rule.code for rule in ALL_RULES} <= set(errors.CODES)


@pytest.mark.parametrize("case", CASES)
def test_cli_lint_and_cli_place_say_the_same(case: str, tmp_path: Path) -> None:
    text, rule, code = CASES[case]
    path = tmp_path / "vm.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["lint", "--format", "json", str(path)])
    assert (
        result.exit_code,
        json.loads(result.stdout)[0]["rule"],
        json.loads(result.stdout)[0]["code"],
    ) == (1, rule, code)
    placed = CliRunner().invoke(app, ["place", "--hosts", FLEET, "--vm", str(path)])
    assert placed.exit_code == 1
    assert f"error [{code}]" in placed.stderr
    assert rule in placed.stderr


@pytest.mark.parametrize("case", CASES)
def test_the_library_raises_the_same_code(case: str, tmp_path: Path) -> None:
    text, _, code = CASES[case]
    path = tmp_path / "vm.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(nfvplace.NfvplaceError) as caught:
        nfvplace.load(path)
    assert caught.value.code == code


@pytest.fixture
def api(tmp_path: Path) -> TestClient:
    from service.service_support import TOKENS, auth  # type: ignore[import-not-found]

    settings = Settings(db_url=f"sqlite:///{tmp_path / 'db.sqlite'}", tokens=TOKENS)
    client = TestClient(create_app(settings), headers=auth("admin"))
    return client


@pytest.mark.parametrize("case", CASES)
def test_the_rest_api_says_the_same(case: str, api: TestClient) -> None:
    text, rule, code = CASES[case]
    yaml_body = {"Content-Type": "application/yaml"}
    with api:
        linted = api.post("/v1/lint", content=text.encode(), headers=yaml_body)
        first = linted.json()["findings"][0]
        assert (first["rule"], first["code"]) == (rule, code)
        envelope = "vm:\n" + "".join(f"  {line}\n" for line in text.splitlines())
        placed = api.post("/v1/placements", content=envelope.encode(), headers=yaml_body)
        assert placed.status_code == 422
        assert placed.json()["code"] == code


def test_http_statuses_come_from_the_table() -> None:
    conflict = ClaimConflictError(errors.CLAIM_CONFLICT, "PU 3 is taken")
    assert error_status(conflict) == 409
    assert error_status(nfvplace.NfvplaceError(errors.INPUT_TOO_LARGE, "big")) == 413
    assert errors.exit_code(errors.USAGE_INVALID_OPTION) == 2
    assert errors.exit_code(errors.PLACEMENT_NO_FIT) == 3


def test_one_definition_per_class_name() -> None:
    homes: dict[str, list[str]] = defaultdict(list)
    for path in (ROOT / "nfvplace").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                homes[node.name].append(str(path.relative_to(ROOT)))
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


AVAILABILITY_NAMES = frozenset({"available", "current", "read_current"})
"""Names a host's availability had besides `availability` in the store and the service."""
COLUMN_MIRRORS = frozenset(
    {"nfvplace.store.tables.HostRow", "nfvplace.store.availability.StoredHost"}
)
"""Rows as the database has them: their field is the column `hosts.available`."""


def test_a_hosts_availability_has_one_name_in_the_store_and_the_service() -> None:
    """No module, function, class or field of the store or the service names a host's availability
    otherwise than `availability` (docs/architecture.md, "One name per concept"), but for the
    rows that mirror the database's column."""
    found = []
    for folder in ("store", "service"):
        for path in sorted((ROOT / "nfvplace" / folder).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            if "migrations" in module:
                continue
            if path.stem in AVAILABILITY_NAMES:
                found.append(module)
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in (
                    AVAILABILITY_NAMES
                ):
                    found.append(f"{module}.{node.name}")
                if isinstance(node, ast.ClassDef) and f"{module}.{node.name}" not in COLUMN_MIRRORS:
                    fields = [
                        item.target.id
                        for item in node.body
                        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                    ]
                    found.extend(
                        f"{module}.{node.name}.{f}" for f in fields if f in AVAILABILITY_NAMES
                    )
    assert found == []
