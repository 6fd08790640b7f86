"""The hypervisor's checks (type, version, capabilities), and why a processor model is refused."""

from __future__ import annotations

from ....models.capabilities import HypervisorCapability
from ....models.processors import refusal
from ...options import ProcessorMatch
from ...reasons import Reason
from ..filtering import FilterInput, HostCheck, detail
from .table import CAPABILITIES, CapabilitiesTable, version_key


def model_reason(inp: FilterInput, i: int, reference: str) -> str:
    """Why host i's processor model is refused: its generation when the table knows both."""
    host = inp.fleet.hosts[i].processor
    settings = (
        f"processor_match={inp.options.processor_match}, "
        f"frequency_scaling={inp.options.frequency_scaling}"
    )
    why = refusal(host.model, reference)
    by_generation = inp.options.processor_match is ProcessorMatch.family
    if why is not None and by_generation and not inp.options.frequency_scaling:
        return f"{why}, so it is not compatible with {reference} ({settings})"
    return (
        f"processor {host.model} ({host.frequency_mhz or '?'} MHz) is not compatible with "
        f"{reference} ({settings})"
    )


def hypervisor_checks(inp: FilterInput, t: CapabilitiesTable) -> list[HostCheck]:
    fleet = inp.fleet
    req = inp.request.vm.hypervisor
    out: list[HostCheck] = []
    if req is not None or inp.request.pinned:
        out.append(
            HostCheck(
                Reason.hypervisor,
                "describe no hypervisor",
                t.hv_type == -1,
                lambda i: ("the host descriptor has no hypervisor section", None, None),
            )
        )
    if req is None:
        return out
    if req.type is not None:
        out.append(
            HostCheck(
                Reason.hypervisor_type,
                f"do not run {req.type}",
                (t.hv_type != fleet.vocab.code(str(req.type))) & (t.hv_type != -1),
                detail(
                    lambda i, w=req.type: (
                        f"hypervisor is {_hypervisor(inp, i, 'type')}, the VM needs {w}",
                        None,
                        None,
                    )
                ),
            )
        )
    if req.min_version:
        out.append(
            HostCheck(
                Reason.hypervisor_version,
                f"run a hypervisor older than {req.min_version}",
                t.hv_version < version_key(req.min_version),
                detail(
                    lambda i, v=req.min_version: (
                        f"hypervisor version {_hypervisor(inp, i, 'version')} is older than {v}",
                        None,
                        None,
                    )
                ),
            )
        )
    for cap in sorted(req.all_required_capabilities, key=CAPABILITIES.index):
        out.extend(_capability_checks(t, cap))
    return out


def _capability_checks(t: CapabilitiesTable, cap: HypervisorCapability) -> list[HostCheck]:
    col = CAPABILITIES.index(cap)
    missing = ~t.caps[:, col]
    disabled = missing & t.caps_disabled[:, col]
    return [
        HostCheck(
            Reason.capability_disabled,
            f"have {cap} present but not enabled",
            disabled,
            detail(
                lambda i, c=cap: (
                    f"hypervisor capability {c} is present but not enabled (BIOS or configuration)",
                    None,
                    None,
                )
            ),
        ),
        HostCheck(
            Reason.capability,
            f"lack hypervisor capability {cap}",
            missing & ~disabled,
            detail(lambda i, c=cap: (f"hypervisor capability {c} is missing", None, None)),
        ),
    ]


def _hypervisor(inp: FilterInput, i: int, attr: str) -> object:
    hv = inp.fleet.hosts[i].hypervisor
    return None if hv is None else getattr(hv, attr)


__all__ = ["hypervisor_checks", "model_reason"]
