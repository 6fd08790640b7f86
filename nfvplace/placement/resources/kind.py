"""What every resource kind is (`Kind`: a name and its reason codes), and the shapes its stages
share: a refusal and the decisions made without the model (`Decides`, `Decisions`), the counting
model's signal (`Uncounted`), and the relaxation as a kind sees it (`RelaxModel`, `RelaxState`).

The stages themselves are small protocols in `stages.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, cast, runtime_checkable

from ortools.sat.python import cp_model

from ..options import Options
from ..reasons import Reason
from ..request import Request
from .base import HostFree, IndexedFleet


class Kind:
    """What every kind has: a name, and the reason codes its rejections carry. The stages it takes
    part in are the protocols of `stages.py` that it implements."""

    name: ClassVar[str]
    reasons: ClassVar[tuple[Reason, ...]] = ()


@dataclass(frozen=True, slots=True)
class Refusal:
    """A kind's `decide` found no way on this host: why, in the words of the summary."""

    reason: Reason
    phrase: str  # for the one-line summary: "have no shared PUs on one node with room ..."
    message: str  # for the host's rejection


@dataclass(slots=True)
class Decisions:
    """What the kinds decided without the model on one host, each kind's decision of its own type
    (`Decides[D]` gives a `D`)."""

    _by_kind: dict[str, object] = field(default_factory=dict)

    def put[D](self, kind: Decides[D], decision: D) -> None:
        self._by_kind[kind.name] = decision

    def of[D](self, kind: Decides[D]) -> D | None:
        # the type as a string: `D | None` evaluated would build a typing union on every call
        return cast("D | None", self._by_kind.get(kind.name))


class Uncounted(Exception):  # noqa: N818 (a signal, not an error)
    """The counting model does not cover this host for this request (the engine counts it)."""


@dataclass(frozen=True, slots=True)
class RelaxState[S]:
    """A kind's handle on state of its own type S kept across the relaxation's calls (made with
    `new` the first time `RelaxModel.state` is asked for it)."""

    kind: str
    new: Callable[[], S]


class RelaxModel(Protocol):
    """What a kind adds to the relaxation: named usage terms (summed per node slot, or per host
    for slot -1, against the kind's `relax_capacity`), and variables and state of its own."""

    @property
    def fleet(self) -> IndexedFleet: ...
    @property
    def model(self) -> cp_model.CpModel: ...
    def use(
        self, owner: str, host: int, slot: int, name: str, term: cp_model.LinearExprT
    ) -> None: ...
    def uses(self, owner: str) -> Mapping[tuple[int, int, str], list[cp_model.LinearExprT]]: ...
    def state[S](self, handle: RelaxState[S]) -> S: ...


class Named(Protocol):
    @property
    def name(self) -> str: ...


# one host: choices without the model (`engine/attempt.py`); here, beside `Decisions`, which
# keeps each kind's decision under it


@runtime_checkable
class Decides[D](Named, Protocol):
    def decide(
        self,
        free: HostFree,
        request: Request,
        allowed: Mapping[int, frozenset[int]],
        options: Options,
    ) -> D | Refusal | None:
        """The kind's decision (None: the request asks nothing of it), or why the host is refused."""
        ...
