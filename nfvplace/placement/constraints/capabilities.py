"""Host-level requirements: processor vendor, flags, model and frequency; memory type; hypervisor
type, version and capabilities (present *and* enabled). Constants per host: checked over the fleet
with numpy, never in the CP-SAT model.

Processor model ranking (NFV-PER 001 8.2.2.1 leaves the inference to the MANO): rank 0 the exact model,
rank 1 one of the descriptor's `compatible_models`, rank 2 a model of the same vendor and line whose
generation is no older than the reference's (the table of `nfvplace.models.processors`: a Gold 6348,
Ice Lake, accepts a Platinum 8480, Sapphire Rapids, never a Gold 6148, Skylake) at a frequency no
lower than the reference; when either generation is unknown, the same family (vendor words of the
model name before the first word with a digit, e.g. "intel xeon gold") instead. Rank 3 (only with
`frequency_scaling`) is any model of the same vendor at no less than `min_frequency_ratio` of the
reference frequency (the seed's 75 % worst-case extrapolation). Required flags are checked exactly,
whatever the rank.
"""

from __future__ import annotations

import numpy as np

from ...models.capabilities import HypervisorCapability
from ...models.processors import SAME_LINE, match_rank, refusal
from ..index import CAPABILITIES, BoolArray, FleetIndex, version_key
from ..options import ProcessorMatch
from .base import FilterInput, HostCheck, detail


def model_rank(fleet: FleetIndex, inp: FilterInput) -> np.ndarray:
    """Rank of each host's processor against the VM's reference model (lower is closer; 9: none)."""
    proc = inp.request.vm.processor
    n = len(fleet)
    if proc is None or proc.model is None:
        return np.zeros(n, dtype=np.int64)
    ranks = np.full(n, 9, dtype=np.int64)
    reference = (proc.reference_frequency_mhz or 0.0) or 0.0
    # rank per distinct model code (few), then broadcast
    by_code: dict[int, tuple[int, bool]] = {}
    present = set(np.unique(fleet.model).tolist())
    for name, code in fleet.vocab.names.items():
        if code not in present:
            continue
        rank = match_rank(name, proc.model, proc.compatible_models)
        if rank is not None:
            by_code[code] = (rank, rank == SAME_LINE)
    freq_ok = fleet.frequency >= reference - 1e-9 if reference else np.ones(n, dtype=np.bool_)
    for code, (rank, needs_freq) in by_code.items():
        hit = fleet.model == code
        if needs_freq:
            hit &= freq_ok
        ranks[hit] = rank
    if inp.options.frequency_scaling and reference:
        vendor = fleet.vendor == fleet.vocab.code((proc.vendor or "").lower() or None)
        if proc.vendor is None:
            vendor = np.ones(n, dtype=np.bool_)
        scaled = vendor & (fleet.frequency >= inp.options.min_frequency_ratio * reference)
        ranks[(ranks > 3) & scaled] = 3
    return ranks


def checks(inp: FilterInput) -> list[HostCheck]:
    fleet = inp.fleet
    vm = inp.request.vm
    out: list[HostCheck] = []
    proc = vm.processor
    if proc is not None:
        if proc.vendor:
            code = fleet.vocab.code(proc.vendor.lower())
            out.append(
                HostCheck(
                    "processor_vendor",
                    f"have a processor vendor other than {proc.vendor}",
                    fleet.vendor != code,
                    detail(
                        lambda i, v=proc.vendor: (
                            f"processor vendor is {fleet.hosts[i].processor.vendor}, the VM needs {v}",
                            None,
                            None,
                        )
                    ),
                )
            )
        if proc.architecture:
            arch = proc.architecture
            wrong_arch = np.array(
                [(h.processor.architecture or arch) != arch for h in fleet.hosts], dtype=np.bool_
            )
            out.append(
                HostCheck(
                    "processor_architecture",
                    f"are not {arch}",
                    wrong_arch,
                    detail(
                        lambda i, a=arch: (
                            f"architecture is {fleet.hosts[i].processor.architecture}, the VM needs {a}",
                            None,
                            None,
                        )
                    ),
                )
            )
        if proc.required_flags:
            flags = sorted({f.lower() for f in proc.required_flags})
            cols = [fleet.vocab.flags.get(f) for f in flags]
            if any(c is None for c in cols):
                failing: BoolArray = np.ones(len(fleet), dtype=np.bool_)
            else:
                failing = ~np.all(fleet.flags[:, [c for c in cols if c is not None]], axis=1)

            def flag_detail(i: int, flags: list[str] = flags) -> tuple[str, None, None]:
                have = {f.lower() for f in fleet.hosts[i].processor.flags}
                missing = [f for f in flags if f not in have]
                return f"processor lacks flags {', '.join(missing)}", None, None

            out.append(
                HostCheck(
                    "processor_flags",
                    f"lack CPU flags {' '.join(flags)}",
                    failing,
                    flag_detail,
                )
            )
        if proc.model and inp.options.processor_match is not ProcessorMatch.any:
            ranks = model_rank(fleet, inp)
            limit = 1 if inp.options.processor_match is ProcessorMatch.exact else 2
            if inp.options.frequency_scaling:
                limit = max(limit, 3)
            out.append(
                HostCheck(
                    "processor_model",
                    f"have a processor not compatible with {proc.model}",
                    ranks > limit,
                    detail(lambda i, m=proc.model: (_model_reason(inp, i, m), None, None)),
                )
            )
        if proc.min_frequency_mhz:
            need = proc.min_frequency_mhz
            out.append(
                HostCheck(
                    "processor_frequency",
                    f"run below {need:g} MHz",
                    fleet.frequency < need - 1e-9,
                    detail(
                        lambda i, need=need: (
                            f"processor runs at {fleet.frequency[i]:g} MHz, the VM needs {need:g}",
                            need,
                            float(fleet.frequency[i]),
                        )
                    ),
                )
            )
    mem = vm.memory
    if mem is not None:
        if mem.type:
            out.append(
                HostCheck(
                    "memory_type",
                    f"do not have {mem.type} memory",
                    fleet.mem_type != fleet.vocab.code(mem.type.lower()),
                    detail(
                        lambda i, t=mem.type: (
                            f"memory type is {(fleet.hosts[i].memory or None) and fleet.hosts[i].memory.type}, "  # type: ignore[union-attr]
                            f"the VM needs {t}",
                            None,
                            None,
                        )
                    ),
                )
            )
        if mem.min_speed_mts:
            need_speed = float(mem.min_speed_mts)
            out.append(
                HostCheck(
                    "memory_speed",
                    f"have memory slower than {need_speed:g} MT/s",
                    fleet.mem_speed < need_speed,
                    detail(
                        lambda i, s=need_speed: (
                            f"memory runs at {fleet.mem_speed[i]:g} MT/s (-1: unknown), the VM needs {s:g}",
                            s,
                            float(fleet.mem_speed[i]),
                        )
                    ),
                )
            )
        if mem.min_channels:
            need_ch = float(mem.min_channels)
            out.append(
                HostCheck(
                    "memory_channels",
                    f"have fewer than {need_ch:g} memory channels",
                    fleet.mem_channels < need_ch,
                    detail(
                        lambda i, c=need_ch: (
                            f"{fleet.mem_channels[i]:g} memory channels (-1: unknown), the VM needs {c:g}",
                            c,
                            float(fleet.mem_channels[i]),
                        )
                    ),
                )
            )
    out.extend(_hypervisor_checks(inp))
    return out


def _model_reason(inp: FilterInput, i: int, reference: str) -> str:
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


def _hypervisor_checks(inp: FilterInput) -> list[HostCheck]:
    fleet = inp.fleet
    req = inp.request.vm.hypervisor
    out: list[HostCheck] = []
    needs_any = req is not None or inp.request.pinned
    caps: set[HypervisorCapability] = set(req.all_required_capabilities) if req else set()
    if needs_any:
        out.append(
            HostCheck(
                "hypervisor",
                "describe no hypervisor",
                fleet.hv_type == -1,
                lambda i: ("the host descriptor has no hypervisor section", None, None),
            )
        )
    if req is None:
        return out
    if req.type is not None:
        code = fleet.vocab.code(str(req.type))
        out.append(
            HostCheck(
                "hypervisor_type",
                f"do not run {req.type}",
                (fleet.hv_type != code) & (fleet.hv_type != -1),
                detail(
                    lambda i, t=req.type: (
                        f"hypervisor is {_hv(fleet, i, 'type')}, the VM needs {t}",
                        None,
                        None,
                    )
                ),
            )
        )
    if req.min_version:
        need = version_key(req.min_version)
        out.append(
            HostCheck(
                "hypervisor_version",
                f"run a hypervisor older than {req.min_version}",
                fleet.hv_version < need,
                detail(
                    lambda i, v=req.min_version: (
                        f"hypervisor version {_hv(fleet, i, 'version')} is older than {v}",
                        None,
                        None,
                    )
                ),
            )
        )
    for cap in sorted(caps, key=CAPABILITIES.index):
        col = CAPABILITIES.index(cap)
        missing = ~fleet.caps[:, col]
        disabled = missing & fleet.caps_disabled[:, col]
        out.append(
            HostCheck(
                "capability_disabled",
                f"have {cap} present but not enabled",
                disabled,
                detail(
                    lambda i, c=cap: (
                        f"hypervisor capability {c} is present but not enabled (BIOS or configuration)",
                        None,
                        None,
                    )
                ),
            )
        )
        out.append(
            HostCheck(
                "capability",
                f"lack hypervisor capability {cap}",
                missing & ~disabled,
                detail(lambda i, c=cap: (f"hypervisor capability {c} is missing", None, None)),
            )
        )
    return out


def _hv(fleet: FleetIndex, i: int, attr: str) -> object:
    hv = fleet.hosts[i].hypervisor
    return None if hv is None else getattr(hv, attr)
