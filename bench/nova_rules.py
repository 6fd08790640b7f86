"""Nova's rules for an instance with a guest NUMA topology on a host view, written from
`nova.virt.hardware` (34.0.0): what an nfvplace placement must respect for Nova to accept it. Used
by bench/nova_diff.py.

- each guest cell on its own host cell, its vCPUs on free dedicated CPUs (`pcpuset` minus
  `pinned_cpus`), no CPU twice; an unpinned (floating) guest cell's vCPUs on the cell's shared
  CPUs (`cpuset`; in the legacy layout those not pinned), no more vCPUs than the cell has;
- `isolate`: each vCPU on a core whose every thread is a free dedicated CPU, one vCPU per core;
- `require`: each vCPU on a core with at least two free dedicated threads;
- memory: hugepages of a size the flavor allows (`large`: any but the smallest; `any`: any; a
  number: that one) covering the cell's memory exactly, from the pool's free pages; normal memory
  from the smallest pool's free pages;
- the emulator thread (`isolate`) on a free dedicated CPU no vCPU uses;
- a PCI device on one of the guest's host cells (`legacy`/`required`), or of their sockets
  (`socket`); `preferred` anywhere.
"""

from __future__ import annotations

from typing import Any

GIB_KIB = 1024 * 1024


def _allowed_pages(word: str | None, sizes: list[int]) -> set[int]:
    """Page sizes (KiB) Nova may back a guest cell with, for `hw:mem_page_size`."""
    smallest = min(sizes) if sizes else 4
    text = (word or "").strip().lower()
    if text in ("", "small"):
        return {smallest}
    if text == "large":
        return set(sizes) - {smallest}
    if text == "any":
        return set(sizes)
    if text.isdigit():
        return {int(text)}
    units = {"kb": 1, "mb": 1024, "gb": GIB_KIB}
    number, unit = text[:-2], text[-2:]
    return {int(number) * units[unit]} if unit in units and number.isdigit() else set()


def _floating(cells: dict[int, dict[str, Any]], config: Any, word: str | None) -> list[str]:
    out = []
    for cs in config.cpu_sets:
        cell = cells[cs.numa_node]
        shared = set(cell["cpuset"])
        if shared == set(cell["pcpuset"]):
            shared -= set(cell["pinned_cpus"])
        floating = cs.floating
        if floating is None or set(floating.cpus) - shared:
            out.append(f"cell {cell['id']}: floating vCPUs off the cell's shared CPUs")
        elif len(floating.vcpus) > len(cell["cpuset"]):
            out.append(f"cell {cell['id']}: more vCPUs than the cell's shared CPUs")
        out += _memory(cell, cs, word)
    return out


def violations(view: dict[str, Any], flavor: dict[str, Any], config: Any) -> list[str]:
    specs = flavor["extra_specs"]
    if config is None or not config.cpu_sets:
        return []
    cells = {c["id"]: c for c in view["cells"]}
    nodes = [cs.numa_node for cs in config.cpu_sets]
    out = _pci(view, config, specs.get("hw:pci_numa_affinity_policy") or "legacy", nodes)
    if specs.get("hw:cpu_policy") != "dedicated":
        return out + _floating(cells, config, specs.get("hw:mem_page_size"))
    policy = specs.get("hw:cpu_thread_policy", "prefer")
    used: set[int] = set()
    if len(set(nodes)) != len(nodes):
        out.append(f"two guest cells on one host cell {nodes}")
    for cs in config.cpu_sets:
        cell = cells[cs.numa_node]
        free = set(cell["pcpuset"]) - set(cell["pinned_cpus"])
        core = {pu: set(s) for s in cell["siblings"] for pu in s}
        pins = set(cs.vcpu_pins.values())
        if pins - free:
            out.append(f"cell {cell['id']}: CPUs {sorted(pins - free)} are not free dedicated")
        if pins & used or len(pins) != len(cs.vcpu_pins):
            out.append(f"cell {cell['id']}: a CPU used twice")
        used |= pins
        for pu in pins:
            threads = core.get(pu, {pu})
            if policy == "isolate" and (threads - free or len(threads & pins) > 1):
                out.append(f"isolate: CPU {pu}'s core {sorted(threads)} is not whole and free")
            if policy == "require" and len(threads & free) < 2:
                out.append(f"require: CPU {pu}'s core has fewer than 2 free threads")
        out += _memory(cell, cs, specs.get("hw:mem_page_size"))
    emulator = set(config.emulator_pins)
    free_all = {pu for c in cells.values() for pu in set(c["pcpuset"]) - set(c["pinned_cpus"])}
    if emulator - free_all or emulator & used:
        out.append(f"emulator CPUs {sorted(emulator)} not free or taken by a vCPU")
    return out


def _pci(view: dict[str, Any], config: Any, policy: str, nodes: list[int]) -> list[str]:
    socket = {c["id"]: c.get("socket") for c in view["cells"]}
    out = []
    for device in config.pci_devices:
        near = (
            {n for n in socket if socket[n] in {socket[m] for m in nodes}}
            if policy == "socket"
            else set(nodes)
        )
        if policy != "preferred" and device.numa_node not in near:
            out.append(f"PCI device {device.pci_address} on node {device.numa_node}, not {near}")
    return out


def _memory(cell: dict[str, Any], cs: Any, word: str | None) -> list[str]:
    pools = {p["size_kb"]: p for p in cell["mempages"]}
    allowed = _allowed_pages(word, sorted(pools))
    smallest = min(pools)
    pages = cs.hugepages
    size = pages.size_kib if pages is not None else smallest
    if size not in allowed:
        return [f"cell {cell['id']}: {size} KiB pages, the flavor allows {sorted(allowed)}"]
    pool = pools.get(size)
    if pool is None:
        return [f"cell {cell['id']}: no {size} KiB pool"]
    free = pool["total"] - pool["used"] - pool["reserved"]
    need_kib = cs.memory_mib * 1024
    if pages is not None and pages.count * size != need_kib:
        return [f"cell {cell['id']}: {pages.count} pages of {size} KiB != {cs.memory_mib} MiB"]
    if need_kib % size or need_kib // size > free:
        return [f"cell {cell['id']}: {need_kib // size} pages of {size} KiB, {free} free"]
    return []
