"""Two fits Nova 34's `numa_fit_instance_to_host` misses, standalone (run in the Nova virtualenv:
`.bench/nova-venv/bin/python bench/nova_fit_repro.py`; prints JSON, exit 0).

1. The fit cache. `numa_fit_instance_to_host` keeps `fit_cache`/`not_fit_cache` keyed on
   `(host_cell.id, instance_cell.id)`, and a successful try overwrites `instance_cell.id` with the
   host cell's id. A later permutation then looks up one guest cell's result under another's key.
   Host cells: 0 with 2 free pCPUs, 1 with 3, 2 with none (2-4 GiB each); guest cells: 0 with 2
   vCPUs, 1 with 3 (`hw:numa_cpus.0=0,1`, `hw:numa_cpus.1=2,3,4`, 1 GiB each). Guest 0 on host 0
   and guest 1 on host 1 fit (each checked with Nova's own `_numa_fit_instance_cell`), yet Nova
   answers None: after guest 0 fitted host 1 (its id became 1), guest 1's failure on host 0 was
   cached as (0, 1), which later read as "guest 0 does not fit host 0".
2. A failed try fixes the page size. `_numa_fit_instance_cell` writes the page size it picks for
   `any` (or `large`) into the guest cell before checking CPUs; when the CPUs then fail, the next host
   cell is asked for that size. Host cell 0 (SMT, every core half pinned, 1 GiB pages) cannot give
   `isolate` whole cores; host cell 1 (no SMT, 3 free pCPUs, 4 KiB pages only) can, with small
   pages, which `any` allows. Nova answers None: cell 0's try left 1 GiB on the guest cell.
"""

from __future__ import annotations

import json
import logging
import warnings
from typing import Any


def _cell(
    objects: Any,
    cell_id: int,
    pcpus: list[int],
    pinned: list[int],
    siblings: list[list[int]],
    memory: int,
    pages: list[tuple[int, int]],
) -> Any:
    return objects.NUMACell(
        id=cell_id,
        cpuset=set(pcpus),
        pcpuset=set(pcpus),
        memory=memory,
        cpu_usage=0,
        memory_usage=0,
        pinned_cpus=set(pinned),
        siblings=[set(s) for s in siblings],
        mempages=[
            objects.NUMAPagesTopology(size_kb=s, total=t, used=0, reserved=0) for s, t in pages
        ],
        network_metadata=objects.NetworkMetadata(physnets=set(), tunneled=False),
        socket=0,
    )


def _guest(objects: Any, hardware: Any, vcpus: int, ram: int, specs: dict[str, str]) -> Any:
    flavor = objects.Flavor(
        name="f",
        flavorid="f",
        vcpus=vcpus,
        memory_mb=ram,
        root_gb=0,
        ephemeral_gb=0,
        swap=0,
        extra_specs=specs,
    )
    return hardware.numa_get_constraints(flavor, objects.ImageMeta.from_dict({"properties": {}}))


def fit_cache(objects: Any, hardware: Any, limits: Any) -> dict[str, Any]:
    """Case 1: the fit cache keyed on guest cell ids the fitter overwrites."""
    small = [(4, 524288)]
    host = objects.NUMATopology(
        cells=[
            _cell(
                objects, 0, list(range(8)), list(range(2, 8)), [[p] for p in range(8)], 2048, small
            ),
            _cell(
                objects,
                1,
                list(range(8, 16)),
                list(range(11, 16)),
                [[p] for p in range(8, 16)],
                2048,
                small,
            ),
            _cell(
                objects,
                2,
                list(range(16, 24)),
                list(range(16, 24)),
                [[p] for p in range(16, 24)],
                4096,
                [(4, 1048576)],
            ),
        ]
    )
    guest = _guest(
        objects,
        hardware,
        5,
        2048,
        {
            "hw:cpu_policy": "dedicated",
            "hw:numa_nodes": "2",
            "hw:numa_cpus.0": "0,1",
            "hw:numa_cpus.1": "2,3,4",
            "hw:numa_mem.0": "1024",
            "hw:numa_mem.1": "1024",
        },
    )
    by_hand = [
        hardware._numa_fit_instance_cell(host.cells[h], guest.obj_clone().cells[g], limits)
        is not None
        for g, h in ((0, 0), (1, 1))
    ]
    nova = hardware.numa_fit_instance_to_host(host, guest.obj_clone(), {}, limits=limits)
    return {"nova": nova is not None, "guest 0 on host cell 0, guest 1 on host cell 1": by_hand}


def page_size(objects: Any, hardware: Any, limits: Any) -> dict[str, Any]:
    """Case 2: a failed try leaves its page size on the guest cell."""
    host = objects.NUMATopology(
        cells=[
            _cell(
                objects,
                0,
                list(range(8)),
                [0, 2, 4, 6],
                [[0, 1], [2, 3], [4, 5], [6, 7]],
                4096,
                [(4, 524288), (1048576, 2)],
            ),
            _cell(
                objects,
                1,
                list(range(8, 16)),
                [8, 9, 10, 11, 12],
                [[p] for p in range(8, 16)],
                4096,
                [(4, 1048576)],
            ),
        ]
    )
    guest = _guest(
        objects,
        hardware,
        3,
        1024,
        {
            "hw:cpu_policy": "dedicated",
            "hw:cpu_thread_policy": "isolate",
            "hw:mem_page_size": "any",
        },
    )
    alone = hardware._numa_fit_instance_cell(host.cells[1], guest.obj_clone().cells[0], limits)
    nova = hardware.numa_fit_instance_to_host(host, guest.obj_clone(), {}, limits=limits)
    return {
        "nova": nova is not None,
        "on host cell 1 alone": None if alone is None else {"page_kb": alone.pagesize},
    }


def main() -> None:
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    from nova import objects

    objects.register_all()
    from nova.virt import hardware

    limits = objects.NUMATopologyLimits(cpu_allocation_ratio=1.0, ram_allocation_ratio=1.0)
    out = {
        "fit_cache": fit_cache(objects, hardware, limits),
        "page_size": page_size(objects, hardware, limits),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
