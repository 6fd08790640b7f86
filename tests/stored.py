"""For the store and service tests: what the store holds, read directly (`generations`), and a
VM Configuration and its commit in the fewest words (`config`, `commit`)."""

from __future__ import annotations

from typing import Any

from nfvplace.models.configuration import VmConfiguration
from nfvplace.store import Store


def generations(store: Any, host_id: str) -> tuple[int, int]:
    """A stored host's generation, and the generation its availability document is exact at."""
    from sqlalchemy import select

    from nfvplace.store.records import HOSTS

    with store.engine.connect() as conn:
        row = conn.execute(
            select(HOSTS.c.generation, HOSTS.c.available_generation).where(HOSTS.c.id == host_id)
        ).one()
    return int(row[0]), int(row[1])


def config(
    owner: str, pus: list[int], vf: str | None = None, pages: int = 1, ways: int = 0
) -> VmConfiguration:
    data: dict[str, Any] = {
        "vm": "vm",
        "instance": owner,
        "host": "h1",
        "cpu_sets": [
            {
                "id": 0,
                "numa_node": 0,
                "vcpu_pins": {str(i): pu for i, pu in enumerate(pus)},
                "memory_mib": 1024 * pages,
                "hugepages": {"size_kib": 1048576, "count": pages},
            }
        ],
        "interfaces": (
            [
                {
                    "name": "e0",
                    "mode": "sriov",
                    "pci_address": vf,
                    "physical_function": "0000:18:00.0",
                }
            ]
            if vf
            else []
        ),
    }
    if ways:
        data["cpu_sets"][0]["cache_ways"] = {"domain": 0, "first_way": 0, "ways": ways}
    return VmConfiguration.model_validate(data)


def commit(store: Store, pid: str, configs: list[VmConfiguration], snapshot=None):  # type: ignore[no-untyped-def]
    return store.commit_placement(
        placement_id=pid,
        idempotency_key=None,
        request_hash="h",
        response={"id": pid},
        configurations=configs,
        snapshot=snapshot or store.snapshot(),
    )
