"""NfvplaceFilter and NfvplaceWeigher inside real Nova 34 objects, against a live `nfvplace serve`.

Nova's own filter handler runs NUMATopologyFilter + PciPassthroughFilter, then NfvplaceFilter, on
`HostState`s updated from `ComputeNode`s and `RequestSpec`s built as nova-api builds them
(bench/nova_scheduler_probe.py, in the Nova virtualenv). Over 500 generated (flavor, host) cases the
two agree wherever Nova is right; every disagreement is classified by the differential's
counterfactuals (bench/nova_classes.py) and none is nfvplace wrong. The weigher orders the passing
hosts by nfvplace's score. When the service is away or refuses the token, `failure_mode` decides,
with one warning line and no traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench import nova_cases, nova_classes, nova_diff

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "bench" / "nova_scheduler_probe.py"


def _probe(nova_python: str, data: dict[str, Any]) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [nova_python, str(PROBE)],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    results: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return results


def filter_table(data: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (flavor, host): Nova's filters and NfvplaceFilter; disagreements classified."""
    rows, disagreements = 0, []
    for case, result in zip(data["cases"], results, strict=True):
        for view in case["hosts"]:
            rows += 1
            nova = view["host"] in (result.get("nova") or [])
            ours = view["host"] in (result.get("nfvplace") or [])
            if nova != ours:
                disagreements.append({"flavor": case["flavor"], "hosts": [view]})
    again = {"pci_alias": data["pci_alias"], "cases": disagreements}
    classes: list[dict[str, Any]] = []
    if disagreements:
        nova, ours = nova_diff.run_nova(again), nova_diff.run_nfvplace(again)
        compared = nova_diff.compare(again, nova, ours)
        classes = nova_classes.classify(
            again, compared, nova_diff.run_nova, nova_diff.run_nfvplace, nova_diff.compare
        )
        # a disagreement of the filters that the fitter differential does not see is its own class
        seen = {(c["flavor"]["name"], c["host"]) for c in classes}
        classes += [
            {
                "class": "filters disagree, fitters agree",
                "flavor": d["flavor"],
                "host": d["hosts"][0]["host"],
            }
            for d in disagreements
            if (d["flavor"]["name"], d["hosts"][0]["host"]) not in seen
        ]
    return {"pairs": rows, "agree": rows - len(disagreements), "classes": classes}


def test_nfvplace_filter_agrees_with_novas_filters_wherever_nova_is_right(
    nova_python: str, live_service: tuple[str, Path]
) -> None:
    url, token_file = live_service
    data = nova_cases.cases(seed=11, flavors=100, hosts_per_flavor=5)
    data |= {"url": url, "token_file": str(token_file)}
    results = _probe(nova_python, data)
    table = filter_table(data, results)
    assert table["pairs"] >= 500
    counts = Counter(c["class"] for c in table["classes"])
    print(json.dumps({"pairs": table["pairs"], "agree": table["agree"], "classes": counts}))
    assert set(counts) <= set(nova_classes.SIDE), counts
    assert not [c for c in counts if nova_classes.SIDE[c] == "nfvplace wrong"], counts
    for result in results:
        if result["refused"]:
            continue
        assert all("[traceback]" not in line for line in result["log"])
        assert len(result["log"]) == 1, result["log"]  # one line per request
        if result["log"][0].startswith("WARNING"):  # refused as written: no host passes
            assert "the request is refused" in result["log"][0]
            assert result["nfvplace"] == []
        scores = result["scores"]
        order = [host for host, _ in result["weighed"]]
        assert sorted(order) == sorted(result["nfvplace"])
        ranked = [scores[h] for h in order]
        assert ranked == sorted(ranked, reverse=True), result  # the weigher's order is the score's


@pytest.mark.parametrize(("mode", "passed"), [("yield", 5), ("reject", 0)])
def test_failure_modes_are_logged_once_and_never_as_a_traceback(
    nova_python: str, tmp_path: Path, mode: str, passed: int
) -> None:
    data = nova_cases.cases(seed=3, flavors=2, hosts_per_flavor=5)
    data |= {"url": "http://127.0.0.1:9", "failure_mode": mode, "timeout": 2.0}
    for result in _probe(nova_python, data):
        if result["refused"]:
            continue
        assert len(result["nfvplace"]) == passed
        warnings = [line for line in result["log"] if line.startswith("WARNING")]
        assert len(warnings) == 1, result["log"]
        assert f"failure_mode={mode}" in warnings[0]
        assert "unreachable" in warnings[0]
        assert not any("[traceback]" in line for line in result["log"])


def test_a_refused_token_is_a_failure_with_the_services_words(
    nova_python: str, live_service: tuple[str, Path], tmp_path: Path
) -> None:
    url, _ = live_service
    wrong = tmp_path / "wrong.token"
    wrong.write_text("not-a-token\n")
    data = nova_cases.cases(seed=3, flavors=1, hosts_per_flavor=3)
    data |= {"url": url, "token_file": str(wrong), "failure_mode": "yield"}
    (result,) = _probe(nova_python, data)
    assert len(result["nfvplace"]) == 3
    (warning,) = [line for line in result["log"] if line.startswith("WARNING")]
    assert "HTTP 401" in warning


def test_novas_loader_finds_the_plug_ins_by_their_nova_conf_paths(nova_python: str) -> None:
    probe = (
        "import json, sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from nova import objects\n"
        "objects.register_all()\n"
        "from nova.scheduler.filters import HostFilterHandler\n"
        "from nova.scheduler.weights import HostWeightHandler\n"
        "f = HostFilterHandler().get_matching_classes(['nfvplace.integrations.nova.NfvplaceFilter'])\n"
        "w = HostWeightHandler().get_matching_classes(['nfvplace.integrations.nova.NfvplaceWeigher'])\n"
        "heavy = [m for m in ('pydantic', 'numpy', 'ortools') if m in sys.modules]\n"
        "print(json.dumps([[c.__name__ for c in f + w], heavy]))\n"
    )
    done = subprocess.run(
        [nova_python, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert json.loads(done.stdout) == [["NfvplaceFilter", "NfvplaceWeigher"], []]
