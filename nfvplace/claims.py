"""Claiming and releasing a VM Configuration's resources on a host descriptor: the only write path.

Pure functions: they return a new Compute Host Descriptor and never change their inputs. One function
computes what a claim would conflict with (`conflicts`), one applies it (`claim`, or `claim_what_fits`
which applies what fits and reports the rest), one undoes it (`release`, its exact inverse). Each
resource kind claims and releases its own part (`placement/resources/*`, `claim`) on one draft of the
host, validated once. The engine claims with them while placing (so the library, the CLI and the
service get a configuration and the host with it claimed from the same call). The store's commit
writes claim rows only: a worker writes its claimed hosts back from its index, a reader claims on a
host's stored document the placements committed since (`claim_all`); the store undoes a released
placement with `release`, and derives a host's availability from what its agent reports with
`release` (placements the agent already shows) then `claim_what_fits`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import CLAIM_CONFLICT, Issue, NfvplaceError
from .models.chd import ComputeHostDescriptor
from .models.configuration import VmConfiguration
from .placement.resources import CLAIMS, implementing
from .placement.resources.draft import HostDraft
from .placement.resources.stages import Owners

_OWNERS = implementing(Owners)


@dataclass(eq=False)
class ClaimConflictError(NfvplaceError):
    """A configuration asks for host resources that are not free (or not there)."""


def _apply(
    host: ComputeHostDescriptor, config: VmConfiguration, sign: int
) -> tuple[ComputeHostDescriptor, list[Issue]]:
    """Claim (sign=+1) or release (sign=-1) `config` on `host`; returns the host and any conflicts."""
    if config.host != host.id:
        return host, [Issue(f"configuration is for host {config.host}, not {host.id}", path="host")]
    draft = HostDraft(host, near=_nodes_named(config))
    for kind in CLAIMS:
        kind.claim(draft, config, sign)
    return draft.build(), draft.issues


def _nodes_named(config: VmConfiguration) -> set[int]:
    """The NUMA nodes a configuration names (where its PUs, ports and VFs are looked up first)."""
    named = {cs.numa_node for cs in config.cpu_sets}
    named.update(i.numa_node for i in config.interfaces if i.numa_node is not None)
    return named


def claim_what_fits(
    host: ComputeHostDescriptor, config: VmConfiguration
) -> tuple[ComputeHostDescriptor, tuple[Issue, ...]]:
    """`host` with every resource of `config` that still fits claimed, and why the rest does not.

    Used when a host agent reports a fresh CHD: existing claims are kept, and what the new CHD no
    longer supports (a VF that vanished, a PU that became ineligible) is reported as a conflict.
    """
    updated, issues = _apply(host, config, +1)
    return updated, tuple(issues)


def claim_all(
    host: ComputeHostDescriptor, configs: Sequence[VmConfiguration]
) -> tuple[ComputeHostDescriptor, tuple[Issue, ...]]:
    """`host` with what fits of each of `configs` claimed in turn, as `claim_what_fits` one after
    another would give, on one draft validated once: replaying many claims (a host read with the
    placements committed since its stored document) costs a validation, not one per claim."""
    if not configs:
        return host, ()
    draft = HostDraft(host)
    for config in configs:
        if config.host != host.id:
            draft.issues.append(
                Issue(f"configuration is for host {config.host}, not {host.id}", path="host")
            )
            continue
        for kind in CLAIMS:
            kind.claim(draft, config, +1)
    return draft.build(), tuple(draft.issues)


def conflicts(host: ComputeHostDescriptor, config: VmConfiguration) -> tuple[Issue, ...]:
    """Why `config` cannot be claimed on `host` (empty when it can)."""
    return claim_what_fits(host, config)[1]


def claim(host: ComputeHostDescriptor, config: VmConfiguration) -> ComputeHostDescriptor:
    """`host` with every resource of `config` marked as used by it; raises ClaimConflictError if any
    resource is missing or already used."""
    updated, issues = _apply(host, config, +1)
    if issues:
        raise ClaimConflictError(
            CLAIM_CONFLICT,
            f"{config.owner} cannot be claimed on {host.id}",
            issues=tuple(issues),
        )
    return updated


def release(host: ComputeHostDescriptor, config: VmConfiguration) -> ComputeHostDescriptor:
    """`host` with the resources `config` holds freed again. Idempotent: releasing twice, or
    releasing what was never claimed, changes nothing that belongs to someone else."""
    if config.owner not in holders(host):
        return host
    return _apply(host, config, -1)[0]


def holders(host: ComputeHostDescriptor) -> set[str]:
    """Every owner `host` shows: its instances and the owners of its PUs, ports, VFs and devices.

    A host agent that reports a VM as running (by its instance id, or as the owner of anything) has
    counted what it uses (hugepages, memory, bandwidth) in what it reports as used.
    """
    return {owner for kind in _OWNERS for owner in kind.owners(host)}


__all__ = [
    "CLAIM_CONFLICT",
    "ClaimConflictError",
    "claim",
    "claim_all",
    "claim_what_fits",
    "conflicts",
    "holders",
    "release",
]
