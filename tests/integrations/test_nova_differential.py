"""The flavor differential against Nova 34's own fitter, a CI-sized run of bench/nova_diff.py
(the bench runs 20,000 pairs): every disagreement has a class, none is nfvplace wrong, and every
nfvplace placement that Nova's rules refuse is on a core with a host-reserved thread (phase 2)."""

from __future__ import annotations

from collections import Counter

from bench import nova_classes, nova_diff, nova_rules


def test_every_disagreement_is_explained_and_none_is_nfvplace_wrong(nova_python: str) -> None:
    result = nova_diff.run(flavors=80, hosts=5, seed=7)
    classes = Counter(c["class"] for c in result["classes"])
    assert set(classes) <= set(nova_classes.SIDE), classes
    assert not [c for c in classes if nova_classes.SIDE[c] == "nfvplace wrong"], classes
    invalid = [r["invalid"] for r in result["rows"] if r.get("invalid")]
    assert all(nova_rules.RESERVED in v for found in invalid for v in found), invalid
    rows = [r for r in result["rows"] if not r["nova_no_topology"]]
    both = sum(r["nova"] and r["nfvplace"] for r in rows)
    assert both >= 20  # the run places something: an agreement on no-fit alone would prove little
