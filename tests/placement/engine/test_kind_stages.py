"""`bench.kind_stages`' child: each kind's stages charged to it, nested within the placement, and
the engine left as it was found (the stages are timed by wrapping the engine's functions)."""

from __future__ import annotations

import nfvplace
from bench.kind_stages import _stages, child


def test_kind_stages_nest_and_leave_the_engine_as_it_was() -> None:
    before = [getattr(owner, name) for owner, name, _ in _stages()]
    out = child(hosts=30, requests=40, seed=10)
    assert [getattr(owner, name) for owner, name, _ in _stages()] == before
    assert nfvplace.Fleet.place is before[0]
    assert set(out) <= {"vran-du", "vbras", "sriov", "cloud"}
    assert "cloud" in out
    for kind, figures in out.items():
        assert figures["Fleet.place #"] == 1.0, kind  # a call a request
        whole = figures["Fleet.place"]
        for label in ("  filter and rank", "  a host tried (attempt)", "  index update"):
            assert figures.get(label, 0.0) <= whole, (kind, label)
        tried = figures.get("  a host tried (attempt) #", 0.0)
        assert figures.get("    exact stage #", 0.0) <= tried + 1e-9
        assert figures.get("      CP-SAT's solve #", 0.0) <= figures.get("      model built #", 0.0)
        assert figures["placed"] <= figures["requests"]
