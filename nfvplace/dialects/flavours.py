"""SOL006 deployment flavours (`df`): instance counts and anti-affinity groups of a VNF's VDUs.

The first deployment flavour is read: each VDU's `min-number-of-instances` becomes its member's
`count`, and an `anti-affinity` group of scope `nfvi-node` an anti-affinity group of its members
(scope host). Other flavours, affinity groups and other scopes are reported, not carried.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import ASSUMED, Note, as_list, as_mapping, parse_count


def read_df(
    vnfd: Mapping[str, Any],
    base: PathKey,
    template: dict[str, Any],
    vdu_ids: list[str],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    """Carry the first `df` of `vnfd` into `template` (whose members follow `vdu_ids`)."""
    flavours = [f for f in as_list(vnfd.get("df")) if isinstance(f, Mapping)]
    if not flavours:
        return
    df, df_path = flavours[0], (*base, "df", 0)
    if len(flavours) > 1:
        notes.append(
            Note(
                (*base, "df", 1),
                f"{len(flavours) - 1} more deployment flavour(s) not carried: nfvplace reads the "
                f"first one ('{df.get('id')}')",
            )
        )
    groups: dict[str, list[str]] = {}
    for index, raw in enumerate(as_list(df.get("vdu-profile"))):
        profile = as_mapping(raw)
        path = (*df_path, "vdu-profile", index)
        vdu = str(profile.get("id"))
        if vdu not in vdu_ids:
            continue
        member = vdu_ids.index(vdu)
        count = parse_count(
            profile.get("min-number-of-instances", 1), "min-number-of-instances", path
        )
        if count > 1:
            template["members"][member]["count"] = count
            origins[("members", member, "count")] = (*path, "min-number-of-instances")
        if "max-number-of-instances" in profile:
            notes.append(
                Note(
                    (*path, "max-number-of-instances"),
                    "scaling beyond the minimum is not placed: nfvplace places the "
                    "min-number-of-instances",
                    ASSUMED,
                )
            )
        ids = profile.get("affinity-or-anti-affinity-group-id")
        nested = [
            as_mapping(g).get("id") for g in as_list(profile.get("affinity-or-anti-affinity-group"))
        ]
        for group in (ids if isinstance(ids, list) else [ids] if ids else []) + nested:
            groups.setdefault(str(group), []).append(template["members"][member]["name"])
    _groups(df, df_path, groups, template, origins, notes)


def _groups(
    df: Mapping[str, Any],
    df_path: PathKey,
    groups: Mapping[str, list[str]],
    template: dict[str, Any],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    anti: list[dict[str, Any]] = []
    for index, raw in enumerate(as_list(df.get("affinity-or-anti-affinity-group"))):
        group = as_mapping(raw)
        path = (*df_path, "affinity-or-anti-affinity-group", index)
        kind = str(group.get("affinityorAntiaffinity", group.get("type", ""))).lower()
        scope = str(group.get("scope", "")).lower()
        members = groups.get(str(group.get("id")), [])
        if kind == "anti-affinity" and scope == "nfvi-node" and len(members) >= 2:
            origins[("anti_affinity", len(anti))] = path
            anti.append({"members": members})
        else:
            notes.append(
                Note(
                    path,
                    f"{kind or 'affinity'} group '{group.get('id')}' of scope '{scope}' with "
                    f"{len(members)} member(s) not carried: nfvplace keeps anti-affinity "
                    "between hosts (scope nfvi-node) of two or more members",
                )
            )
    if anti:
        template["anti_affinity"] = anti
