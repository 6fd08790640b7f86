"""A Nova flavor's guest NUMA layout and page size, as Nova's `numa_get_constraints` builds them.

- `hw:numa_nodes` alone splits vCPUs and memory evenly; a count that does not divide both is
  refused, as Nova refuses it (`ImageNUMATopologyAsymmetric`). `hw:numa_cpus.N`/`hw:numa_mem.N`
  give the split by hand.
- `hw:mem_page_size` by number (KiB), unit (`2MB`) or word: `small` is normal memory; `large` is
  1 GiB pages when every guest node's memory is a whole number of GiB (Nova never fits 1 GiB pages
  otherwise), else 2 MiB pages; `any` is read as small pages. Memory per guest node that is not a
  whole number of the asked pages is refused, as Nova never fits it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..models.loading import PathKey
from .base import ASSUMED, DialectError, Note, page_size_kib, parse_count, parse_cpu_list, parse_int

GIB_KIB = 1024 * 1024
TWO_MIB_KIB = 2048


@dataclass(frozen=True)
class GuestNode:
    vcpus: list[int]
    memory_mib: int
    vcpus_from: PathKey
    memory_from: PathKey


def guest_nodes(
    get: Callable[[str], str],
    at: Callable[[str], PathKey],
    has: Callable[[str], bool],
    vcpus: int,
    ram: int,
) -> list[GuestNode]:
    """The guest NUMA nodes of a flavor (one when `hw:numa_nodes` is not given)."""
    nodes = parse_count(get("hw:numa_nodes") or "1", "hw:numa_nodes", at("hw:numa_nodes"))
    if nodes <= 0 or nodes > vcpus:
        raise DialectError(
            f"hw:numa_nodes must be between 1 and vcpus ({vcpus}), got {nodes}", at("hw:numa_nodes")
        )
    manual = any(has(f"hw:numa_cpus.{n}") or has(f"hw:numa_mem.{n}") for n in range(nodes))
    if not manual and (vcpus % nodes or ram % nodes):
        raise DialectError(
            f"hw:numa_nodes={nodes} does not divide vcpus ({vcpus}) and ram ({ram} MiB) evenly: "
            "Nova refuses such a flavor (ImageNUMATopologyAsymmetric); give the split with "
            "hw:numa_cpus.N and hw:numa_mem.N",
            at("hw:numa_nodes"),
        )
    out = []
    for node in range(nodes):
        cpus_key, mem_key = f"hw:numa_cpus.{node}", f"hw:numa_mem.{node}"
        if has(cpus_key):
            ids = parse_cpu_list(get(cpus_key), cpus_key, at(cpus_key))
            cpus_from = at(cpus_key)
        else:
            share = vcpus // nodes
            ids = list(range(node * share, (node + 1) * share if node < nodes - 1 else vcpus))
            cpus_from = at("hw:numa_nodes")
        if has(mem_key):
            memory, memory_from = parse_int(get(mem_key), mem_key, at(mem_key)), at(mem_key)
        else:
            memory, memory_from = ram // nodes, at("hw:numa_nodes")
        out.append(GuestNode(ids, memory, cpus_from, memory_from))
    return out


def page_size(word: str, where: PathKey, nodes: list[GuestNode], notes: list[Note]) -> int | None:
    """The hugepage size (KiB) every guest node's memory is made of, or None for normal memory."""
    text = word.strip().lower()
    if text == "any":
        notes.append(
            Note(
                where,
                "mem_page_size 'any' read as small pages: Nova takes the largest size with "
                "enough free pages (1 GiB, 2 MiB, then 4 KiB); nfvplace cannot say 'any size' "
                "yet, so it asks for normal memory",
                ASSUMED,
            )
        )
        return None
    if text == "large":
        whole_gib = all(n.memory_mib * 1024 % GIB_KIB == 0 for n in nodes)
        kib = GIB_KIB if whole_gib else TWO_MIB_KIB
        notes.append(
            Note(
                where,
                f"mem_page_size 'large' read as {'1 GiB' if whole_gib else '2 MiB'} pages"
                + (
                    ": Nova falls back to 2 MiB pages where 1 GiB pages are short; nfvplace "
                    "cannot say 'any large size' yet"
                    if whole_gib
                    else " (the guest memory is not whole GiB, so Nova can only use 2 MiB pages)"
                ),
                ASSUMED,
            )
        )
    else:
        kib = page_size_kib(word or None, where) or 0
    if not kib:
        return None
    for index, node in enumerate(nodes):
        if node.memory_mib * 1024 % kib:
            raise DialectError(
                f"hw:mem_page_size={word}: guest NUMA node {index} has {node.memory_mib} MiB, "
                f"not a whole number of {kib} KiB pages; Nova never fits such a flavor: give "
                "memory in multiples of the page size",
                where,
            )
    return kib
