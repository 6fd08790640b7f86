"""Table-driven placement cases, one table per resource kind (its module under
tests/placement/resources/): feasible and infeasible, each with its reason and numbers; `check`
places one and checks the answer against the reference checker, or the rejection."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from builders import NodeSpec
from checker import violations

from nfvplace.claims import claim
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import place  # the engine door: these cases probe the engine, lint aside


@dataclass
class Case:
    name: str
    hosts: list[ComputeHostDescriptor]
    vm: VmDescriptor
    reason: str | None = None  # None: must fit
    requested: float | None = None
    available: float | None = None
    node: int | None = None  # expected node of cpu-set 0 when it fits
    summary: str | None = None  # substring of the summary line
    options: dict[str, Any] = field(default_factory=dict)


def two_nodes(**kw: Any) -> list[NodeSpec]:
    return [NodeSpec(**kw), NodeSpec(**kw)]


def check(case: Case) -> None:
    """Place the case; a fit must be valid and claimable, a refusal must give the case's reason."""
    result = place(case.hosts, case.vm, **case.options)
    if case.reason is None:
        assert result.ok, result.diagnosis and result.diagnosis.summary
        assert violations(case.hosts, case.vm, result.configurations) == []
        config = result.configuration
        host_ = next(h for h in case.hosts if h.id == config.host)
        claim(host_, config)  # the engine's answer is claimable
        if case.node is not None:
            assert config.cpu_sets[0].numa_node == case.node
        return
    assert not result.ok
    assert result.configurations == ()
    diagnosis = result.diagnosis
    assert diagnosis is not None
    assert diagnosis.summary.startswith(f"0/{len(case.hosts)} hosts fit: ")
    assert len(diagnosis.rejections) == len(case.hosts)
    rejection = diagnosis.rejections[0]
    assert rejection.reason == case.reason, rejection
    if case.requested is not None:
        assert rejection.requested == case.requested
    if case.available is not None:
        assert rejection.available == case.available
    if case.summary is not None:
        assert case.summary in diagnosis.summary
