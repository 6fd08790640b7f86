"""The kubelet's Topology Manager policy and scope as a NodeResourceTopology object states them: the
deprecated `topologyPolicies` words, then the `topologyManager*` attributes, which win (as
scheduler-plugins' nodeconfig reads them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from .base import ASSUMED, DialectError, Note, as_list, as_mapping

POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
SCOPES = ("container", "pod")
LEGACY_POLICIES = {  # the deprecated `topologyPolicies` words (scheduler-plugins' nodeconfig)
    "SingleNUMANodeContainerLevel": ("single-numa-node", "container"),
    "SingleNUMANodePodLevel": ("single-numa-node", "pod"),
    "SingleNUMANode": ("single-numa-node", "container"),  # v1alpha1
    "RestrictedContainerLevel": ("restricted", "container"),
    "RestrictedPodLevel": ("restricted", "pod"),
    "Restricted": ("restricted", "container"),
    "BestEffortContainerLevel": ("best-effort", "container"),
    "BestEffortPodLevel": ("best-effort", "pod"),
    "BestEffort": ("best-effort", "container"),
    "None": ("none", "container"),
}


def topology_manager(data: Mapping[str, Any], notes: list[Note]) -> dict[str, Any]:
    """Policy and scope: the deprecated `topologyPolicies` first, then the attributes, which win
    (as scheduler-plugins' nodeconfig reads them); the kubelet's defaults otherwise."""
    out: dict[str, Any] = {"policy": "none", "scope": "container"}
    legacy = as_list(data.get("topologyPolicies"))
    if legacy:
        word = str(legacy[0])
        if word not in LEGACY_POLICIES:
            raise DialectError(f"unknown topology policy {word!r}", ("topologyPolicies", 0))
        out["policy"], out["scope"] = LEGACY_POLICIES[word]
    said = False
    for index, raw in enumerate(as_list(data.get("attributes"))):
        attribute = as_mapping(raw)
        name, value = attribute.get("name"), str(attribute.get("value", ""))
        path: PathKey = ("attributes", index, "value")
        if name == "topologyManagerPolicy":
            out["policy"], said = _one_of(value, POLICIES, name, path), True
        elif name == "topologyManagerScope":
            out["scope"] = _one_of(value, SCOPES, name, path)
        elif name == "topologyManagerOptionPreferClosestNumaNodes":
            out["prefer_closest_numa_nodes"] = (
                _one_of(value, ("true", "false"), name, path) == "true"
            )
        elif isinstance(name, str) and name.startswith("topologyManagerOption"):
            notes.append(Note(("attributes", index), f"Topology Manager option {name} not carried"))
    if not legacy and not said:
        notes.append(
            Note(
                (),
                "no topologyManagerPolicy attribute: read as the kubelet's default, none",
                ASSUMED,
            )
        )
    return out


def _one_of(value: str, accepted: tuple[str, ...], name: Any, path: PathKey) -> str:
    if value not in accepted:
        raise DialectError(f"{name} must be one of {', '.join(accepted)}, got {value!r}", path)
    return value
