"""Nova 34's own answer for the differential (bench/nova_diff.py). Runs in the Nova virtualenv
(bench/nova_venv.sh); reads the cases as JSON on stdin and prints Nova's answers as JSON.

For each case: the flavor's guest topology from `nova.virt.hardware.numa_get_constraints` (or the
exception Nova refuses the flavor with), the PCI requests from `nova.pci.request` with the cloud's
`[pci] alias`, then per host `numa_fit_instance_to_host` on Nova's own objects (`NUMATopology`,
`PciDeviceStats`, the filter's `NUMATopologyLimits`) with a fresh clone of the guest topology, as
`NUMATopologyFilter` does. Beside it, Nova repaired, for the counterfactual classes:

- `nocache`: the same permutation search over Nova's own `_numa_fit_instance_cell`, without the
  fit caches (the guest cells shared by every try, as in Nova);
- `fresh`: the same, each try on fresh clones of the guest cells (Nova's fitter writes the chosen
  page size and the host cell's id into the guest cell it tries, even when the try fails);
- `legacy`: the host with `cpuset = pcpuset` per cell (the layout for which Nova's `isolate` has
  no bug #1889633), for `isolate` flavors;
- `repaired`: both at once;
- `valid`: whether Nova's own answer pins each guest cell inside the free dedicated CPUs of the host
  cell it names (a cached fit can carry the pinning of another cell).

Input: {"pci_alias": [alias, ...], "cases": [{"flavor": {name, vcpus, ram, extra_specs},
"image": {"properties": {...}} (optional), "hosts": [host view, ...]}, ...]}.
"""

from __future__ import annotations

import itertools
import json
import logging
import sys
import warnings
from typing import Any


def main() -> None:
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)  # Nova warns once per bug #1889633 hit
    from nova import conf, objects

    objects.register_all()
    data = json.load(sys.stdin)
    conf.CONF.set_override("alias", [json.dumps(a) for a in data["pci_alias"]], group="pci")
    json.dump({"results": [_case(case) for case in data["cases"]]}, sys.stdout)


def topology(view: dict[str, Any], legacy: bool = False) -> Any:
    from nova import objects

    cells = []
    for c in view["cells"]:
        cells.append(
            objects.NUMACell(
                id=c["id"],
                cpuset=set(c["pcpuset"] if legacy else c["cpuset"]),
                pcpuset=set(c["pcpuset"]),
                memory=c["memory"],
                cpu_usage=c["cpu_usage"],
                memory_usage=c["memory_usage"],
                pinned_cpus=set(c["pinned_cpus"]),
                siblings=[set(s) for s in c["siblings"]],
                mempages=[objects.NUMAPagesTopology(**p) for p in c["mempages"]],
                network_metadata=objects.NetworkMetadata(physnets=set(), tunneled=False),
                socket=c["socket"],
            )
        )
    return objects.NUMATopology(cells=cells)


def pools(view: dict[str, Any]) -> Any:
    """The host view's PCI pools as Nova's `PciDevicePoolList` (what a ComputeNode reports)."""
    from nova import objects

    return objects.PciDevicePoolList(
        objects=[
            objects.PciDevicePool(
                vendor_id=p["vendor_id"],
                product_id=p["product_id"],
                numa_node=p["numa_node"],
                count=p["count"],
                tags={"dev_type": p["dev_type"]}
                | ({"physical_network": p["physical_network"]} if p["physical_network"] else {}),
            )
            for p in view["pci_pools"]
        ]
    )


def _pci_stats(view: dict[str, Any], topology: Any) -> Any:
    from nova.pci import stats

    return stats.PciDeviceStats(topology, stats=pools(view))


def _case(case: dict[str, Any]) -> dict[str, Any]:
    from nova import objects
    from nova.pci import request as pci_request
    from nova.virt import hardware

    spec = case["flavor"]
    flavor = objects.Flavor(
        name=spec["name"],
        flavorid=spec["name"],
        vcpus=spec["vcpus"],
        memory_mb=spec["ram"],
        root_gb=spec.get("disk", 0),
        ephemeral_gb=0,
        swap=0,
        extra_specs=dict(spec["extra_specs"]),
    )
    image = objects.ImageMeta.from_dict(case.get("image") or {"properties": {}})
    try:
        guest = hardware.numa_get_constraints(flavor, image)
        policy = hardware.get_pci_numa_policy_constraint(flavor, image)  # as nova-api does
        requests = pci_request.get_pci_requests_from_flavor(flavor, policy).requests
    except Exception as exc:  # Nova refuses the flavor: no host fits it
        return {"refused": type(exc).__name__, "hosts": []}
    if guest is None:
        return {"refused": None, "no_topology": True, "hosts": []}
    return {"refused": None, "hosts": [_host(view, guest, requests) for view in case["hosts"]]}


def _host(view: dict[str, Any], guest: Any, requests: list[Any]) -> dict[str, Any]:
    from nova import objects
    from nova.virt import hardware

    limits = objects.NUMATopologyLimits(
        cpu_allocation_ratio=view["cpu_allocation_ratio"],
        ram_allocation_ratio=view["ram_allocation_ratio"],
    )

    def fit(cells: Any) -> Any:
        return hardware.numa_fit_instance_to_host(
            cells,
            guest.obj_clone(),
            {},
            limits=limits,
            pci_requests=requests,
            pci_stats=_pci_stats(view, cells),
        )

    host = topology(view)
    got = fit(host)
    cells = None if got is None else [c.id for c in got.cells]
    isolate = any(c.cpu_thread_policy == "isolate" for c in guest.cells)
    legacy = topology(view, legacy=True) if isolate else host
    return {
        "fits": got is not None,
        "cells": cells,
        "pins": None
        if got is None
        else [sorted((c.cpu_pinning or {}).values()) for c in got.cells],
        "valid": got is None or _valid(host, got),
        "nocache": _search(host, guest, limits, requests, _pci_stats(view, host)),
        "fresh": _search(host, guest, limits, requests, _pci_stats(view, host), True),
        "legacy": fit(legacy) is not None,
        "repaired": _search(legacy, guest, limits, requests, _pci_stats(view, legacy), True),
    }


def _valid(topology: Any, got: Any) -> bool:
    """Every guest cell pinned inside the free dedicated CPUs of the host cell it names, no CPU
    twice."""
    by_id = {c.id: c for c in topology.cells}
    seen: set[int] = set()
    for cell in got.cells:
        pins = set((cell.cpu_pinning or {}).values()) | set(cell.cpuset_reserved or ())
        if seen & pins or pins - by_id[cell.id].free_pcpus:
            return False
        seen |= pins
    return True


def _search(
    topology: Any, guest: Any, limits: Any, requests: Any, pci: Any, fresh: bool = False
) -> bool:
    """Nova's permutation search over its own cell fitter, without its fit caches; `fresh`: each
    permutation on fresh clones of the guest cells (a try that fails leaves no mark on them)."""
    from nova import exception
    from nova.virt import hardware

    if len(topology.cells) < len(guest.cells):
        return False
    cells = guest.obj_clone().cells
    for perm in itertools.permutations(topology.cells, len(guest.cells)):
        chosen = []
        for k, (host_cell, cell) in enumerate(zip(perm, cells, strict=True)):
            reserved = 1 if guest.emulator_threads_isolated and k == 0 else 0
            try:
                got = hardware._numa_fit_instance_cell(
                    host_cell, cell.obj_clone() if fresh else cell, limits, reserved
                )
            except exception.MemoryPageSizeNotSupported:
                got = None
            if got is None:
                break
            chosen.append(got)
        else:
            if not requests or pci.support_requests(requests, {}, chosen):
                return True
    return False


if __name__ == "__main__":
    main()
