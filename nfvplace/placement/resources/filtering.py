"""What the kinds give the vectorised filter: host checks and node needs, over the whole fleet."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..options import Options
from ..reasons import Reason
from ..request import Request
from .base import BoolArray, IndexedFleet

Detail = Callable[[int], tuple[str, float | None, float | None]]
"""host index -> (message with numbers, requested, available)."""


@dataclass(frozen=True, slots=True)
class FilterInput:
    fleet: IndexedFleet
    request: Request
    options: Options


@dataclass(frozen=True, slots=True)
class HostCheck:
    """A host-level condition over the fleet: `failing[i]` says host i does not meet it."""

    code: Reason
    summary: str  # phrase for the one-line summary, e.g. "lack CPU flags avx512f"
    failing: BoolArray
    detail: Detail


@dataclass(frozen=True, slots=True)
class NodeNeed:
    """A per-node condition of one part of the VM (a cpu-set, or its shared vCPUs): `ok[i, j]`
    says node slot j of host i meets it. A diagnosis reads `available / per` of the hosts it names
    (`in_units`): a division over every host and node cost more than the comparison."""

    code: Reason
    phrase: str  # "4 free 1 GiB pages"
    ok: BoolArray
    available: npt.NDArray[np.float64] | npt.NDArray[np.int64]
    requested: float
    unit: str  # how `available` reads: "free 1 GiB pages"
    per: int = 1  # `available` counts 1/`per` of a unit (kbit/s of Gbps): divided when read


def detail(fn: Callable[..., tuple[str, float | None, float | None]]) -> Detail:
    """Type a message lambda that binds its values through default arguments."""
    return fn


def no_host(fleet: IndexedFleet) -> BoolArray:
    return np.zeros(len(fleet), dtype=np.bool_)


def in_units(need: NodeNeed, hosts: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
    """What the hosts `hosts` have of `need`, per node slot, in its unit."""
    have = need.available[hosts]
    if need.per != 1:
        divided: npt.NDArray[np.float64] = have / need.per
        return divided
    return have.astype(np.float64)
