"""Processor, memory type and hypervisor: host-level requirements, constant per host.

Checked over the fleet with numpy, never in the CP-SAT model: processor vendor, architecture, flags,
model and frequency; memory type, speed and channels; hypervisor type, version and capabilities
(present *and* enabled).

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

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from ....models.chd import ComputeHostDescriptor
from ....models.configuration import VmConfiguration
from ....models.processors import SAME_LINE, match_rank
from ....models.vmd import MemoryRequirements, ProcessorRequirements, VariantMatch
from ...options import ProcessorMatch
from ...reasons import Reason
from ..base import BoolArray, FloatArray, HostFree, Vocabulary
from ..filtering import FilterInput, HostCheck, detail
from ..kind import Kind
from ..rows import rows_all
from .hypervisor import hypervisor_checks, model_reason
from .table import CAPABILITIES, CapabilitiesTable, version_key


class CapabilitiesKind(Kind):
    name = "capabilities"
    reasons = (
        Reason.processor_vendor,
        Reason.processor_architecture,
        Reason.processor_flags,
        Reason.processor_model,
        Reason.processor_frequency,
        Reason.memory_type,
        Reason.memory_speed,
        Reason.memory_channels,
        Reason.hypervisor,
        Reason.hypervisor_type,
        Reason.hypervisor_version,
        Reason.capability,
        Reason.capability_disabled,
    )

    def variant_hosts(
        self, table: CapabilitiesTable, vocab: Vocabulary, match: VariantMatch
    ) -> BoolArray:
        t = table
        ok: BoolArray = np.ones(len(t.vendor), dtype=np.bool_)
        if match.processor_vendor:
            ok &= t.vendor == vocab.code(match.processor_vendor.lower())
        if match.processor_models:
            codes = [vocab.code(m.lower()) for m in match.processor_models]
            ok &= np.isin(t.model, codes)
        if match.min_frequency_mhz:
            ok &= t.frequency >= match.min_frequency_mhz
        if match.hypervisor_type is not None:
            ok &= t.hv_type == vocab.code(str(match.hypervisor_type))
        if match.hypervisor_min_version:
            ok &= t.hv_version >= version_key(match.hypervisor_min_version)
        return ok

    def vocabulary(self, host: ComputeHostDescriptor) -> Iterable[tuple[str, Hashable]]:
        yield from (("flags", f.lower()) for f in host.processor.flags)
        yield "names", host.processor.vendor.lower()
        yield "names", host.processor.model.lower()
        if host.hypervisor is not None:
            yield "names", str(host.hypervisor.type)
        if host.memory is not None and host.memory.type:
            yield "names", host.memory.type.lower()

    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> CapabilitiesTable:
        flags = max(len(vocab.values("flags")), 1)
        return CapabilitiesTable(
            vendor=np.full(hosts, -1, dtype=np.int64),
            model=np.full(hosts, -1, dtype=np.int64),
            frequency=np.zeros(hosts, dtype=np.float64),
            flags=_by_column(hosts, flags),
            hv_type=np.full(hosts, -1, dtype=np.int64),
            hv_version=np.full(hosts, -1.0, dtype=np.float64),
            caps=_by_column(hosts, len(CAPABILITIES)),
            caps_disabled=_by_column(hosts, len(CAPABILITIES)),
            mem_type=np.full(hosts, -1, dtype=np.int64),
            mem_speed=np.full(hosts, -1.0, dtype=np.float64),
            mem_channels=np.full(hosts, -1.0, dtype=np.float64),
        )

    def fill(
        self,
        table: CapabilitiesTable,
        i: int,
        host: ComputeHostDescriptor,
        free: HostFree,
        vocab: Vocabulary,
    ) -> None:
        proc = host.processor
        table.vendor[i] = vocab.code(proc.vendor)
        table.model[i] = vocab.code(proc.model)
        table.frequency[i] = proc.frequency_mhz or 0.0
        table.flags[i] = False
        for flag in proc.flags:
            table.flags[i, vocab.column("flags", flag.lower())] = True
        hv = host.hypervisor
        table.caps[i] = False
        table.caps_disabled[i] = False
        table.hv_type[i] = -1 if hv is None else vocab.code(str(hv.type))
        table.hv_version[i] = -1.0 if hv is None else version_key(hv.version)
        for cap in hv.capabilities if hv else ():
            table.caps[i, CAPABILITIES.index(cap)] = True
        for cap in hv.disabled_capabilities if hv else ():
            table.caps_disabled[i, CAPABILITIES.index(cap)] = True
        mem = host.memory
        table.mem_type[i] = vocab.code(mem.type.lower() if mem and mem.type else None)
        table.mem_speed[i] = float(mem.speed_mts) if mem and mem.speed_mts is not None else -1.0
        table.mem_channels[i] = float(mem.channels) if mem and mem.channels is not None else -1.0

    def columns_claimed(
        self,
        table: CapabilitiesTable,
        i: int,
        host: ComputeHostDescriptor | None,
        before: ComputeHostDescriptor,
        config: VmConfiguration,
    ) -> bool:
        # a pending claim took no vSwitch port (`nics.vfs_claimed`): nothing `fill` reads, kept
        return host is None

    def columns_kept(self, host: ComputeHostDescriptor, before: ComputeHostDescriptor) -> bool:
        # what `fill` reads; a claim writes none of it, and keeps these very objects
        return (
            host.processor is before.processor
            and host.hypervisor is before.hypervisor
            and host.memory is before.memory
        )

    def host_checks(self, inp: FilterInput) -> list[HostCheck]:
        vm = inp.request.vm
        out: list[HostCheck] = []
        if vm.processor is not None:
            out.extend(_processor_checks(inp, vm.processor))
        if vm.memory is not None:
            out.extend(_memory_checks(inp, vm.memory))
        out.extend(hypervisor_checks(inp, _table(inp)))
        return out


CAPABILITIES_KIND = CapabilitiesKind()


def _by_column(hosts: int, columns: int) -> BoolArray:
    """False, hosts x columns, laid out column by column: a check reads one flag or capability
    of every host (`table[:, c]`, one contiguous block: a seventh of the time of every ninth
    byte of the table)."""
    return np.zeros((columns, hosts), dtype=np.bool_).T


def _table(inp: FilterInput) -> CapabilitiesTable:
    return inp.fleet.table(CAPABILITIES_KIND)


def model_rank(inp: FilterInput) -> np.ndarray:
    """Rank of each host's processor against the VM's reference model (lower is closer; 9: none)."""
    proc = inp.request.vm.processor
    t = _table(inp)
    n = len(inp.fleet)
    if proc is None or proc.model is None:
        return np.zeros(n, dtype=np.int64)
    ranks = np.full(n, 9, dtype=np.int64)
    reference = (proc.reference_frequency_mhz or 0.0) or 0.0
    by_code: dict[int, tuple[int, bool]] = {}  # rank per distinct model code (few), then broadcast
    present = set(np.unique(t.model).tolist())
    for name in inp.fleet.vocab.values("names"):
        code = inp.fleet.vocab.code(name)
        rank = match_rank(name, proc.model, proc.compatible_models) if code in present else None
        if rank is not None:
            by_code[code] = (rank, rank == SAME_LINE)
    freq_ok = t.frequency >= reference - 1e-9 if reference else np.ones(n, dtype=np.bool_)
    for code, (rank, needs_freq) in by_code.items():
        hit = t.model == code
        if needs_freq:
            hit &= freq_ok
        ranks[hit] = rank
    if inp.options.frequency_scaling and reference:
        vendor = t.vendor == inp.fleet.vocab.code((proc.vendor or "").lower() or None)
        if proc.vendor is None:
            vendor = np.ones(n, dtype=np.bool_)
        scaled = vendor & (t.frequency >= inp.options.min_frequency_ratio * reference)
        ranks[(ranks > 3) & scaled] = 3
    return ranks


def _processor_checks(inp: FilterInput, proc: ProcessorRequirements) -> list[HostCheck]:
    fleet, t = inp.fleet, _table(inp)
    out: list[HostCheck] = []
    if proc.vendor:
        out.append(
            HostCheck(
                Reason.processor_vendor,
                f"have a processor vendor other than {proc.vendor}",
                t.vendor != fleet.vocab.code(proc.vendor.lower()),
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
        out.append(_architecture_check(inp, proc.architecture))
    if proc.required_flags:
        out.append(_flags_check(inp, sorted({f.lower() for f in proc.required_flags})))
    if proc.model and inp.options.processor_match is not ProcessorMatch.any:
        limit = 1 if inp.options.processor_match is ProcessorMatch.exact else 2
        if inp.options.frequency_scaling:
            limit = max(limit, 3)
        out.append(
            HostCheck(
                Reason.processor_model,
                f"have a processor not compatible with {proc.model}",
                model_rank(inp) > limit,
                detail(lambda i, m=proc.model: (model_reason(inp, i, m), None, None)),
            )
        )
    if proc.min_frequency_mhz:
        need = proc.min_frequency_mhz
        out.append(
            HostCheck(
                Reason.processor_frequency,
                f"run below {need:g} MHz",
                t.frequency < need - 1e-9,
                detail(
                    lambda i, need=need: (
                        f"processor runs at {t.frequency[i]:g} MHz, the VM needs {need:g}",
                        need,
                        float(t.frequency[i]),
                    )
                ),
            )
        )
    return out


def _architecture_check(inp: FilterInput, arch: str) -> HostCheck:
    # the descriptors held: no claim writes the processor, so a claim kept pending is not built
    fleet = inp.fleet
    archs = [fleet.held(i)[0].processor.architecture for i in range(len(fleet))]
    wrong = np.array([(a or arch) != arch for a in archs], dtype=np.bool_)
    return HostCheck(
        Reason.processor_architecture,
        f"are not {arch}",
        wrong,
        detail(
            lambda i, a=arch: (
                f"architecture is {archs[i]}, the VM needs {a}",
                None,
                None,
            )
        ),
    )


def _flags_check(inp: FilterInput, flags: list[str]) -> HostCheck:
    fleet, t = inp.fleet, _table(inp)
    cols = [fleet.vocab.column("flags", f) for f in flags]
    if any(c is None for c in cols):
        failing: BoolArray = np.ones(len(fleet), dtype=np.bool_)
    else:
        failing = ~rows_all(t.flags[:, [c for c in cols if c is not None]])

    def flag_detail(i: int, flags: list[str] = flags) -> tuple[str, None, None]:
        have = {f.lower() for f in fleet.hosts[i].processor.flags}
        missing = [f for f in flags if f not in have]
        return f"processor lacks flags {', '.join(missing)}", None, None

    return HostCheck(
        Reason.processor_flags, f"lack CPU flags {' '.join(flags)}", failing, flag_detail
    )


def _memory_checks(inp: FilterInput, mem: MemoryRequirements) -> list[HostCheck]:
    fleet, t = inp.fleet, _table(inp)
    out: list[HostCheck] = []
    if mem.type:

        def type_detail(i: int, wanted: str = mem.type) -> tuple[str, None, None]:
            have: Any = fleet.hosts[i].memory
            return f"memory type is {have and have.type}, the VM needs {wanted}", None, None

        out.append(
            HostCheck(
                Reason.memory_type,
                f"do not have {mem.type} memory",
                t.mem_type != fleet.vocab.code(mem.type.lower()),
                type_detail,
            )
        )
    if mem.min_speed_mts:
        speed = float(mem.min_speed_mts)
        out.append(
            _at_least(
                Reason.memory_speed,
                f"have memory slower than {speed:g} MT/s",
                t.mem_speed,
                speed,
                "memory runs at {have:g} MT/s (-1: unknown), the VM needs {need:g}",
            )
        )
    if mem.min_channels:
        channels = float(mem.min_channels)
        out.append(
            _at_least(
                Reason.memory_channels,
                f"have fewer than {channels:g} memory channels",
                t.mem_channels,
                channels,
                "{have:g} memory channels (-1: unknown), the VM needs {need:g}",
            )
        )
    return out


def _at_least(reason: Reason, summary: str, have: FloatArray, need: float, text: str) -> HostCheck:
    """Hosts whose figure `have` is below `need`; `text` words one host's figures."""
    return HostCheck(
        reason,
        summary,
        have < need,
        detail(lambda i: (text.format(have=have[i], need=need), need, float(have[i]))),
    )
