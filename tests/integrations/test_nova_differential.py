"""The flavor differential against Nova 34's own fitter, a CI-sized run of bench/nova_diff.py
(the bench runs 20,000 pairs): every disagreement has a class, none is nfvplace wrong, and Nova's
rules accept every nfvplace placement."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

from bench import nova_classes, nova_diff

ROOT = Path(__file__).resolve().parents[2]


def test_every_disagreement_is_explained_and_none_is_nfvplace_wrong(nova_python: str) -> None:
    result = nova_diff.run(flavors=80, hosts=5, seed=7)
    classes = Counter(c["class"] for c in result["classes"])
    assert set(classes) <= set(nova_classes.SIDE), classes
    assert not [c for c in classes if nova_classes.SIDE[c] == "nfvplace wrong"], classes
    invalid = [r["invalid"] for r in result["rows"] if r.get("invalid")]
    assert not invalid
    rows = [r for r in result["rows"] if not r["nova_no_topology"]]
    both = sum(r["nova"] and r["nfvplace"] for r in rows)
    assert both >= 20  # the run places something: an agreement on no-fit alone would prove little


def test_the_fits_nova_34_misses_are_reproduced_standalone(nova_python: str) -> None:
    """bench/nova_fit_repro.py, the reproductions docs/integrations/nova.md cites."""
    done = subprocess.run(
        [nova_python, str(ROOT / "bench" / "nova_fit_repro.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout)
    assert found["fit_cache"] == {
        "nova": False,
        "guest 0 on host cell 0, guest 1 on host cell 1": [True, True],
    }
    assert found["page_size"] == {"nova": False, "on host cell 1 alone": {"page_kb": 4}}
