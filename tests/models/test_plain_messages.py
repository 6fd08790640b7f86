"""Messages are nfvplace's, never the validation library's: every schema error says what the field
must be, what it got and the fix; a host dialect's fixes name the host format; every finding of
a 422 carries the JSON pointer of its field."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from nfvplace.lint import lint_text
from nfvplace.service.app import create_app
from nfvplace.service.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PYDANTIC = ("Input should", "after validation", "valid dictionary", "instance of", "should be")
VMD = "schema: nfvplace/vmd/v1\nname: v\n"
CHD = "schema: nfvplace/chd/v1\nid: h\nprocessor: {vendor: GenuineIntel, model: Xeon}\n"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (CHD + "numa_nodes: []\n", "needs at least 1 item(s), has 0"),
        (VMD + "vcpus: 2\nmemory_mib: 1024\nmemory: 5\n", "must be a mapping"),
        (VMD + "vcpus: 2.5\nmemory_mib: 1024\n", "must be a whole number, not 2.5"),
        (VMD + "vcpus: two\nmemory_mib: 1024\n", "must be a whole number, not 'two'"),
        (VMD + "vcpus: 2\nmemory_mib: 1024\ncpu_oversubscription: maybe\n", "true or false"),
        (VMD + "vcpus: 2\nmemory_mib: 1024\ndescription: [a]\n", "must be text"),
        (VMD + "vcpus: 2\nmemory_mib: 1024\nhypervisor: {type: foo}\n", "must be 'kvm'"),
        (VMD + "vcpus: 2\nmemory_mib: 1024\ninterfaces: 3\n", "must be a list, not 3"),
    ],
)
def test_schema_errors_are_in_nfvplaces_words(text: str, says: str) -> None:
    findings = [f for f in lint_text(text, "d.yaml").findings if f.rule == "NFV001"]
    assert findings, text
    said = " ".join(f"{f.message} {f.hint}" for f in findings)
    assert says in said
    assert not [p for p in PYDANTIC if p in said], said
    assert all(f.hint for f in findings)


def test_a_field_that_must_be_a_mapping_names_its_fields() -> None:
    (finding,) = lint_text(VMD + "vcpus: 2\nmemory_mib: 1024\nmemory: 5\n", "d.yaml").findings
    assert finding.hint is not None
    assert "min_speed_mts" in finding.hint


def test_an_openvim_host_is_told_to_use_the_host_format() -> None:
    path = ROOT / "tests" / "data" / "dialects" / "openvim" / "host-example0.yaml"
    findings = lint_text(path.read_text(), str(path)).findings
    hints = [f.hint or "" for f in findings if f.rule == "NFV005"]
    assert hints
    assert all("nfvplace/chd/v1" in h and "nfvplace/vmd/v1" not in h for h in hints)


def test_every_finding_of_a_refused_request_has_a_pointer(tmp_path: Path) -> None:
    app = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'n.db'}", no_auth=True))
    pages = {"size": "2MiB", "count": 2**31 - 1}
    vm = {
        "schema": "nfvplace/vmd/v1",
        "name": "v",
        "cpu_sets": [{"id": 0, "vcpus": [0], "memory_mib": 1024, "hugepages": pages}],
    }
    with TestClient(app) as client:
        answer = client.post("/v1/placements", json={"vm": vm, "dry_run": True})
        assert answer.status_code == 422
        findings = answer.json()["findings"]
        assert all(isinstance(f.get("pointer"), str) for f in findings), findings
        error = next(f for f in findings if f["rule"] == "NFV201")
        assert error["pointer"] == "/vm/cpu_sets/0/hugepages"
        bad = client.post("/v1/placements", json={"vm": {**vm, "memory": 5}})
        assert bad.status_code == 422
        assert not [p for p in PYDANTIC if p in bad.text], bad.text
        query = client.get("/v1/placements?limit=many")
        assert query.status_code == 422
        assert not [p for p in PYDANTIC if p in query.text], query.text
