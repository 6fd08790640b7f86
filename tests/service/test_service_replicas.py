"""Two `nfvplace serve` processes (replicas) over one database: each sees what the other did at
its very next request (a host registered, a placement made, a placement released)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from service_hosts import host, vm
from service_support import Server, auth

pytestmark = pytest.mark.slow  # real servers and processes: not in the quick subset


@pytest.mark.parametrize("database", ["postgres", "sqlite"])
def test_a_placement_through_one_replica_is_respected_by_the_other(
    database: str, request: pytest.FixtureRequest, serve: Callable[..., Server]
) -> None:
    db = str(request.getfixturevalue(f"{database}_url"))
    first, second = serve(db), serve(db)
    one_vm = vm(vcpus=2, pages=1, sriov=1)
    # room for exactly one such VM: one node, PU 0 host-reserved (its core never whole: `isolate`
    # takes neither thread), two whole free cores, one page
    only = host("h1", nodes=1, cores=3, pages_1g=1, vfs=2)
    with (
        httpx.Client(base_url=first.url, headers=auth("admin")) as a,
        httpx.Client(base_url=second.url, headers=auth("admin")) as b,
    ):
        # both replicas have built their index (empty) before anything is registered
        assert a.post("/v1/placements", json={"vm": one_vm}).status_code == 409
        assert b.post("/v1/placements", json={"vm": one_vm}).status_code == 409
        assert a.put("/v1/hosts/h1", json=only).status_code == 201
        dry = b.post("/v1/placements", json={"vm": one_vm, "dry_run": True})
        assert dry.status_code == 200, dry.text  # B sees the host A registered
        placed = a.post("/v1/placements", json={"vm": one_vm})
        assert placed.status_code == 201, placed.text
        refused = b.post("/v1/placements", json={"vm": one_vm})
        assert refused.status_code == 409, refused.text  # B sees A's claim: no double claim
        assert refused.json()["code"] == "nfvplace.placement.no_fit"
        assert "hugepages" in refused.json()["detail"] or "free" in refused.json()["detail"]
        assert b.get(f"/v1/placements/{placed.json()['id']}").json() == placed.json()
        assert b.delete(f"/v1/placements/{placed.json()['id']}").status_code == 204
        again = a.post("/v1/placements", json={"vm": one_vm})
        assert again.status_code == 201, again.text  # A sees B's release
        metrics = a.get("/metrics").text + b.get("/metrics").text
    assert "nfvplace_placement_conflicts_total 0.0" in metrics  # decided on fresh state: no retry
