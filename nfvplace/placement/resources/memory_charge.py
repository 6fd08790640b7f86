"""Memory charged on a host's descriptor (`memory.py`'s claim): a cpu-set's hugepages on its
node's pool of their size, and normal memory on the node."""

from __future__ import annotations

from typing import Any

from .draft import HostDraft


def claim_pages(
    draft: HostDraft, memory: dict[str, Any], node: int, index: int, pages: Any, sign: int
) -> None:
    path = f"cpu_sets[{index}].hugepages"
    pool = next((p for p in memory.get("hugepages", []) if p["size_kib"] == pages.size_kib), None)
    if pool is None:
        draft.fail(f"node {node} has no {pages.size_kib} KiB pool", path)
        return
    used = pool.get("used", 0) + sign * pages.count
    if sign > 0 and used > pool["total"]:
        draft.fail(
            f"node {node}: {pool['total'] - pool.get('used', 0)} free "
            f"{pages.size_kib} KiB pages, {pages.count} claimed",
            path,
        )
    pool["used"] = max(used, 0)


def charge_normal(memory: dict[str, Any], delta_mib: int) -> None:
    normal = memory.setdefault("normal", {})
    normal["used_mib"] = max(normal.get("used_mib", 0) + delta_mib, 0)
