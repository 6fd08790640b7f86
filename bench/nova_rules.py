"""Nova's rules for a pinned instance on a host view, written from `nova.virt.hardware` (34.0.0):
what an nfvplace placement must respect for Nova to accept it. Used by bench/nova_diff.py.

- each guest cell on its own host cell, its vCPUs on free dedicated CPUs (`pcpuset` minus
  `pinned_cpus`), no CPU twice;
- `isolate`: each vCPU on a core whose every thread is a free dedicated CPU, one vCPU per core;
- `require`: each vCPU on a core with at least two free dedicated threads;
- memory: hugepages of a size the flavor allows (`large`: any but the smallest; `any`: any; a
  number: that one) covering the cell's memory exactly, from the pool's free pages; normal memory
  from the smallest pool's free pages;
- the emulator thread (`isolate`) on a free dedicated CPU no vCPU uses;
- a PCI device on one of the guest's host cells (`legacy`/`required`; `preferred` anywhere).
"""

from __future__ import annotations

from typing import Any

GIB_KIB = 1024 * 1024
RESERVED = "host-reserved threads"


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


def violations(view: dict[str, Any], flavor: dict[str, Any], config: Any) -> list[str]:
    specs = flavor["extra_specs"]
    if specs.get("hw:cpu_policy") != "dedicated" or config is None:
        return []
    cells = {c["id"]: c for c in view["cells"]}
    policy = specs.get("hw:cpu_thread_policy", "prefer")
    out: list[str] = []
    used: set[int] = set()
    nodes = [cs.numa_node for cs in config.cpu_sets]
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
            reserved = threads - set(cell["pcpuset"]) - set(cell["cpuset"])
            why = f" ({RESERVED}: {sorted(reserved)})" if reserved else ""
            if policy == "isolate" and (threads - free or len(threads & pins) > 1):
                out.append(f"isolate: CPU {pu}'s core {sorted(threads)} is not whole and free{why}")
            if policy == "require" and len(threads & free) < 2:
                out.append(f"require: CPU {pu}'s core has fewer than 2 free threads{why}")
        out += _memory(cell, cs, specs.get("hw:mem_page_size"))
    emulator = set(config.emulator_pins)
    free_all = {pu for c in cells.values() for pu in set(c["pcpuset"]) - set(c["pinned_cpus"])}
    if emulator - free_all or emulator & used:
        out.append(f"emulator CPUs {sorted(emulator)} not free or taken by a vCPU")
    pci_policy = specs.get("hw:pci_numa_affinity_policy") or "legacy"
    for device in config.pci_devices:
        if pci_policy in ("legacy", "required") and device.numa_node not in nodes:
            out.append(f"PCI device {device.pci_address} on node {device.numa_node}, not {nodes}")
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
