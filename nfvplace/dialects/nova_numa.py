"""A Nova flavor's guest NUMA layout and page size, as Nova's `numa_get_constraints` builds them.

- `hw:numa_nodes` alone splits vCPUs and memory evenly; a count that does not divide both is
  refused, as Nova refuses it (`ImageNUMATopologyAsymmetric`). `hw:numa_cpus.N`/`hw:numa_mem.N`
  give the split by hand.
- `hw:mem_page_size` by number (KiB), unit (`2MB`) or word: `small` is normal memory; `large` and
  `any` are the VM Descriptor's page size words (chosen on the host node: the largest size whose
  free pages hold the guest node's memory; `any` falls back to small pages). Memory per guest node
  that is not a whole number of the asked pages (of 2 MiB for `large`) is refused, as Nova never
  fits it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..models.loading import PathKey
from .base import DialectError, Page, hugepages_of, parse_count, parse_cpu_list, parse_int
from .base import page_size as base_page_size

TWO_MIB_KIB = 2048
NOVA_SIZE = re.compile(r"(\d+)(?:([KMGT]i?)?(B|b|bit))?")  # oslo_utils.strutils, IEC units


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


def nova_page_size(word: str, where: PathKey) -> Page:
    """`hw:mem_page_size` as Nova reads it (`_get_numa_pagesize_constraint`): the words `small`,
    `large`, `any`; digits are KiB (`2048`, and `4096` is 4 MiB); else a size with a unit and a
    byte or bit suffix (`2MB`, `1GiB`, `2048KB`; `1Gb` is a gigabit), case as written."""
    text = word.strip()
    if not text or text == "small":
        return None
    if text in ("large", "any"):
        return text
    match = NOVA_SIZE.fullmatch(text)
    if match is None:
        raise DialectError(
            f"hw:mem_page_size={word!r} is not a page size Nova reads: use 'small', 'large', "
            "'any', a number of KiB, or a size such as '2MB' or '1GB' (Nova refuses '2M', '1gb')",
            where,
        )
    number, unit, suffix = match.groups()
    if suffix is None:  # digits alone: KiB
        kib = int(number)
    else:
        kib = int(number) * 1024 ** (" KMGT".index(unit[0]) if unit else 0) // 1024
        kib = kib // 8 if suffix != "B" else kib
    if kib < 4 or kib & (kib - 1):
        raise DialectError(
            f"hw:mem_page_size={word!r} is {kib} KiB, not a page size: use small, large, any or "
            "a power-of-two size such as 2MB or 1GB",
            where,
        )
    return base_page_size(f"{kib}KiB", where)


def page_size(word: str, where: PathKey, nodes: list[GuestNode]) -> Page:
    """The page size every guest node's memory is made of."""
    page = nova_page_size(word, where)
    if page is None or page == "any":
        return page
    kib = TWO_MIB_KIB if page == "large" else int(page)
    text = word.strip().lower()
    for index, node in enumerate(nodes):
        if node.memory_mib * 1024 % kib:
            size = (
                "2 MiB pages (the smallest large size)" if text == "large" else f"{kib} KiB pages"
            )
            raise DialectError(
                f"hw:mem_page_size={word}: guest NUMA node {index} has {node.memory_mib} MiB, "
                f"not a whole number of {size}; Nova never fits such a flavor: give memory in "
                "multiples of the page size",
                where,
            )
    return page


def floating_sets(
    layout: list[GuestNode],
    page: Page,
    at: Callable[[str], PathKey],
    origins: dict[PathKey, PathKey],
    named: bool,
) -> dict[str, Any]:
    """A shared flavor's guest NUMA topology: floating cpu-sets (vCPUs unpinned on each node's
    shared PUs), with their memory and hugepages on that node; `named`: the flavor says
    `hw:numa_nodes` (else a page size alone made the topology)."""
    cpu_sets = []
    for index, node in enumerate(layout):
        cpu_set: dict[str, Any] = {
            "id": index,
            "vcpus": node.vcpus,
            "memory_mib": node.memory_mib,
            "floating": True,
        }
        origins[("cpu_sets", index, "vcpus")] = node.vcpus_from
        origins[("cpu_sets", index, "memory_mib")] = node.memory_from
        if page:
            cpu_set["hugepages"] = hugepages_of(page, node.memory_mib)
            origins[("cpu_sets", index, "hugepages")] = at("hw:mem_page_size")
        cpu_sets.append(cpu_set)
    origins[("cpu_sets",)] = at("hw:numa_nodes" if named else "hw:mem_page_size")
    return {"cpu_sets": cpu_sets}
