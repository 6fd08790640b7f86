"""Consistency check of a store: every invariant the claims rely on, as one line per problem."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import Engine, select

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from .availability import HOST_STATE, derive, read_availability, stored_hosts
from .records import CLAIMS, HOSTS, INSTANCES, PAGE_CLAIMS, PLACEMENT_HOSTS, PLACEMENTS, POOLS
from .resources import held_resources, shares_held


def audit(engine: Engine) -> list[str]:
    """Every inconsistency between live placements, claim rows, counters and availability."""
    with engine.connect() as conn:
        placements = {
            row[0]: [VmConfiguration.model_validate(c) for c in row[1]]
            for row in conn.execute(
                select(PLACEMENTS.c.id, PLACEMENTS.c.configurations)
                .where(PLACEMENTS.c.released_at.is_(None))
                .order_by(PLACEMENTS.c.created_at, PLACEMENTS.c.id)
            )
        }
        claims = conn.execute(
            select(CLAIMS.c.placement_id, CLAIMS.c.host_id, CLAIMS.c.kind, CLAIMS.c.resource)
        ).all()
        page_claims = conn.execute(select(PAGE_CLAIMS)).mappings().all()
        pools = conn.execute(select(POOLS)).mappings().all()
        hosts = conn.execute(select(HOSTS)).mappings().all()
        states = stored_hosts(conn.execute(select(*HOST_STATE).order_by(HOSTS.c.id)))
        available = {host.id: chd for host, chd in read_availability(conn, states)}
        links = conn.execute(select(PLACEMENT_HOSTS)).mappings().all()
        instances = conn.execute(select(INSTANCES)).mappings().all()
    problems = _claim_rows(placements, claims)
    for link in [*links, *instances]:
        if link["placement_id"] not in placements:
            problems.append(f"placement row of released {link['placement_id']}")
    owners = {(r["placement_id"], r["owner"]) for r in instances}
    expected_owners = {(p, c.owner) for p, cs in placements.items() for c in cs}
    if owners != expected_owners:
        problems.append("placement_instances differ from the live configurations")
    problems.extend(_pages(placements, page_claims, pools))
    for host in hosts:
        problems.extend(_availability(host, placements, available.get(host["id"])))
    return problems


def _availability(
    host: Any,
    placements: dict[str, list[VmConfiguration]],
    read: ComputeHostDescriptor | None,  # as readers see it (the document + recent claims)
) -> list[str]:
    """The host's availability as read, and its stored document once exact, against its report
    with every live placement claimed."""
    if host["available_generation"] > host["generation"]:
        return [f"host {host['id']}: availability ahead of the host's generation"]
    on_host = [c for cs in placements.values() for c in cs if c.host == host["id"]]
    derived = derive(ComputeHostDescriptor.model_validate(host["chd"]), on_host)
    expected = _normal(derived.availability.model_dump(mode="json", by_alias=True))
    problems = []
    if read is None or _normal(read.model_dump(mode="json", by_alias=True)) != expected:
        problems.append(f"host {host['id']}: availability differs from CHD + live claims")
    exact = host["available_generation"] == host["generation"]
    if exact and _normal(dict(host["available"])) != expected:
        problems.append(f"host {host['id']}: stored availability differs from CHD + live claims")
    return problems


def _claim_rows(placements: dict[str, list[VmConfiguration]], claims: Any) -> list[str]:
    problems: list[str] = []
    rows_by_placement: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    for placement_id, host_id, kind, resource in claims:
        if placement_id not in placements:
            problems.append(f"claim {host_id}/{kind}/{resource} of released {placement_id}")
        rows_by_placement[placement_id].add((host_id, kind, resource))
    owners: dict[tuple[str, str, str], str] = {}
    for placement_id, configs in placements.items():
        expected = {(h.host, h.kind, h.resource) for c in configs for h in held_resources(c)}
        if expected != rows_by_placement.get(placement_id, set()):
            problems.append(f"placement {placement_id}: claim rows differ from its resources")
        for key in expected:
            if key in owners:
                problems.append(f"{key} held by {owners[key]} and {placement_id}")
            owners[key] = placement_id
    return problems


def _pages(placements: dict[str, list[VmConfiguration]], page_claims: Any, pools: Any) -> list[str]:
    problems: list[str] = []
    pages_rows: dict[tuple[str, int, int], int] = defaultdict(int)
    for row in page_claims:
        if row["placement_id"] not in placements:
            problems.append(f"hugepage claim of released {row['placement_id']}")
        pages_rows[(row["host_id"], row["numa_node"], row["size_kib"])] += row["count"]
    expected_pages = shares_held(c for cs in placements.values() for c in cs)
    for pool in pools:
        key = (str(pool["host_id"]), int(pool["numa_node"]), int(pool["size_kib"]))
        if pool["claimed"] != pages_rows.get(key, 0) or pool["claimed"] != expected_pages.get(
            key, 0
        ):
            problems.append(f"hugepages {key}: counter {pool['claimed']} != claims")
        if pool["claimed"] > pool["capacity"]:
            problems.append(f"hugepages {key}: {pool['claimed']} > {pool['capacity']}")
    return problems


def _normal(value: Any) -> Any:
    """Comparable form of an availability: instances in id order, floats to 6 decimals, and a port
    left `sriov` with no VF in use counted as `free` (a release leaves it so, a report may not)."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _normal(v) for k, v in value.items()}
    if "instances" in out and isinstance(out["instances"], list):
        out["instances"] = sorted(out["instances"], key=lambda i: str(i["id"]))
    if out.get("usage") == "sriov" and not any(vf.get("in_use") for vf in out.get("vfs", [])):
        out["usage"] = "free"
    return out
