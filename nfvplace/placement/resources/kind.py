"""`ResourceKind`: everything nfvplace knows about one kind of host resource, behind one interface.

A kind (CPUs, memory, NICs, ...) is one module under `placement/resources/`; the registry
(`resources/__init__.py`) lists them, and every stage of the pipeline is a loop over that list that
names no kind. The stages, and the hooks a kind implements for each (`Kind` gives every hook a
default that does nothing, so a kind implements only the stages it takes part in):

| stage | hooks | who loops |
|---|---|---|
| index columns | `vocabulary`, `new_table`, `fill` | `index/` |
| free resources of a host | `free`, `free_again` | `index/free.py` |
| variants a host matches | `variant_hosts` | `engine/variants.py` |
| filter (every host at once) | `host_checks` (ordered by `check_order`), `node_needs` | `engine/filter.py` |
| choices made without the model | `decide` | `engine/attempt.py` |
| exact model (CP-SAT) | `in_model`, `post_demand`, `post_limits`, `costs`, `blame` | `engine/solver.py` |
| exact ids | `assign`, `explain` | `engine/assign.py`, `engine/attempt.py` |
| counting model (capacity) | `counts`, `count_state`, `count_take`, `count_caps` | `joint/counting.py` |
| relaxation (joint) | `relax_slot_ok`, `relax_add`, `relax_host`, `relax_capacity`, `relax_finish` | `joint/relaxation.py` |
| claim and release on a CHD | `claim`, `owners` | `claims.py` |
| links between a VNF's members on one host | `link_kbps` | `joint/state.py` |
| policy scores | `fullness`, `room`, `kept`, `node_fullness`, `node_kept` | `engine/policies/` |

Every rejection a kind gives carries one of its `reasons` (`placement/reasons.py`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from ortools.sat.python import cp_model

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.vmd import VariantMatch
from ..options import Options
from ..reasons import Reason
from ..request import CpuSetDemand, Part, Request
from ..result import ExplainRow
from .base import BoolArray, HostFree, IndexedFleet, IntArray, NoTable, Table, Vocabulary
from .draft import ConfigurationDraft, HostDraft
from .filtering import FilterInput, HostCheck, NodeNeed
from .model import Layout, ModelContext
from .scoring import Fullness, Kept, NodeFullness

Decisions = Mapping[str, object]
"""What kinds decided without the model (`decide`), by kind name."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A kind's `decide` found no way on this host: why, in the words of the summary."""

    reason: Reason
    phrase: str  # for the one-line summary: "have no shared PUs on one node with room ..."
    message: str  # for the host's rejection


class Uncounted(Exception):  # noqa: N818 (a signal, not an error)
    """The counting model does not cover this host for this request (the engine counts it)."""


class RelaxModel(Protocol):
    """What a kind adds to the relaxation: named usage terms (summed per node slot, or per host
    for slot -1, against the kind's `relax_capacity`), and variables of its own."""

    @property
    def fleet(self) -> IndexedFleet: ...
    @property
    def model(self) -> cp_model.CpModel: ...
    def use(
        self, owner: str, host: int, slot: int, name: str, term: cp_model.LinearExprT
    ) -> None: ...
    def uses(self, owner: str) -> Mapping[tuple[int, int, str], list[cp_model.LinearExprT]]: ...
    def state(self, owner: str) -> dict[str, Any]: ...


class ResourceKind[T: Table, F](Protocol):
    @property
    def name(self) -> str: ...
    @property
    def reasons(self) -> tuple[Reason, ...]: ...
    @property
    def check_order(self) -> int: ...  # where its host checks run (lower first)
    @property
    def blame(self) -> tuple[int, str] | None: ...  # (order, what its limits are) for `blame`
    @property
    def costs(self) -> Mapping[str, str]: ...  # the objective's parts it adds, and what they count
    @property
    def seed_terms(self) -> Mapping[str, tuple[Hashable, ...]]: ...  # vocabulary every fleet has

    # index columns
    def vocabulary(self, host: ComputeHostDescriptor) -> Iterable[tuple[str, Hashable]]: ...
    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> T: ...
    def fill(
        self, table: T, i: int, host: ComputeHostDescriptor, free: HostFree, vocab: Vocabulary
    ) -> None: ...

    # free resources
    def free(self, host: ComputeHostDescriptor) -> F: ...
    def free_again(
        self, host: ComputeHostDescriptor, before: ComputeHostDescriptor, free_before: F
    ) -> F: ...

    # variants (`engine/variants.py`)
    def variant_hosts(
        self, table: T, vocab: Vocabulary, match: VariantMatch
    ) -> BoolArray | None: ...

    # filter
    def host_checks(self, inp: FilterInput) -> list[HostCheck]: ...
    def node_needs(self, inp: FilterInput, part: Part) -> list[NodeNeed]: ...

    # one host: choices without the model, the model, exact ids, explanation
    def decide(
        self,
        free: HostFree,
        request: Request,
        allowed: Mapping[int, frozenset[int]],
        options: Options,
    ) -> object | Refusal | None: ...
    def in_model(self, request: Request) -> bool: ...
    def post_demand(self, ctx: ModelContext) -> None: ...
    def post_limits(self, ctx: ModelContext) -> None: ...
    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None: ...
    def explain(
        self, free: HostFree, request: Request, layout: Layout | None, decisions: Decisions
    ) -> list[ExplainRow]: ...

    # counting model
    def counts(self, request: Request) -> bool: ...
    def count_state(
        self, fleet: IndexedFleet, i: int, slot: int, request: Request
    ) -> object | None: ...
    def count_take(self, state: Any, request: Request, spread: bool) -> Reason | None: ...
    def count_caps(
        self, fleet: IndexedFleet, i: int, request: Request
    ) -> list[tuple[Reason, int]]: ...

    # relaxation
    def relax_slot_ok(
        self, fleet: IndexedFleet, i: int, slot: int, request: Request, part: Part
    ) -> bool: ...
    def relax_add(
        self,
        model: RelaxModel,
        host: int,
        slot: int,
        x: cp_model.IntVar,
        request: Request,
        part: Part | None,
    ) -> None: ...
    def relax_host(
        self, model: RelaxModel, host: int, z: cp_model.IntVar, request: Request
    ) -> None: ...
    def relax_capacity(
        self, fleet: IndexedFleet, host: int, slot: int, name: str
    ) -> int | None: ...
    def relax_finish(self, model: RelaxModel) -> None: ...

    # claims
    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None: ...
    def owners(self, host: ComputeHostDescriptor) -> Iterable[str]: ...

    # joint search: links between members of a VNF on one host
    def link_kbps(self, table: T, host: int) -> int | None: ...

    # policy scores (`scoring.py`)
    def fullness(self, table: T) -> Fullness | None: ...
    def room(self, table: T) -> IntArray | None: ...
    def kept(self, table: T, request: Request) -> Kept | None: ...
    def node_fullness(self, free: F, slot: int) -> NodeFullness | None: ...
    def node_kept(self, free: F, slot: int, request: Request, cs: CpuSetDemand) -> int: ...


class Kind[T: Table, F]:
    """Defaults for every hook: a kind overrides the stages it takes part in."""

    name: ClassVar[str]
    reasons: ClassVar[tuple[Reason, ...]] = ()
    check_order: ClassVar[int] = 100
    blame: ClassVar[tuple[int, str] | None] = None
    costs: ClassVar[Mapping[str, str]] = {}
    seed_terms: ClassVar[Mapping[str, tuple[Hashable, ...]]] = {}

    def vocabulary(self, host: ComputeHostDescriptor) -> Iterable[tuple[str, Hashable]]:
        return ()

    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> T:
        return NoTable()  # type: ignore[return-value]

    def fill(
        self, table: T, i: int, host: ComputeHostDescriptor, free: HostFree, vocab: Vocabulary
    ) -> None:
        return None

    def free(self, host: ComputeHostDescriptor) -> F:
        return None  # type: ignore[return-value]

    def free_again(
        self, host: ComputeHostDescriptor, before: ComputeHostDescriptor, free_before: F
    ) -> F:
        """`free(host)` of a new version of `before` (same node ids), whose part was `free_before`:
        a kind may keep what it derived from objects the new version still holds (a claim
        changes one node; the index's update after each placement reads the rest again)."""
        return self.free(host)

    def variant_hosts(self, table: T, vocab: Vocabulary, match: VariantMatch) -> BoolArray | None:
        """The hosts that meet what `match` asks of this kind (None: it asks nothing of it)."""
        return None

    def host_checks(self, inp: FilterInput) -> list[HostCheck]:
        return []

    def node_needs(self, inp: FilterInput, part: Part) -> list[NodeNeed]:
        return []

    def decide(
        self,
        free: HostFree,
        request: Request,
        allowed: Mapping[int, frozenset[int]],
        options: Options,
    ) -> object | Refusal | None:
        return None

    def in_model(self, request: Request) -> bool:
        return False

    def post_demand(self, ctx: ModelContext) -> None:
        return None

    def post_limits(self, ctx: ModelContext) -> None:
        return None

    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None:
        return None

    def explain(
        self, free: HostFree, request: Request, layout: Layout | None, decisions: Decisions
    ) -> list[ExplainRow]:
        return []

    def counts(self, request: Request) -> bool:
        return True

    def count_state(
        self, fleet: IndexedFleet, i: int, slot: int, request: Request
    ) -> object | None:
        return None

    def count_take(self, state: Any, request: Request, spread: bool) -> Reason | None:
        return None

    def count_caps(self, fleet: IndexedFleet, i: int, request: Request) -> list[tuple[Reason, int]]:
        return []

    def relax_slot_ok(
        self, fleet: IndexedFleet, i: int, slot: int, request: Request, part: Part
    ) -> bool:
        return True

    def relax_add(
        self,
        model: RelaxModel,
        host: int,
        slot: int,
        x: cp_model.IntVar,
        request: Request,
        part: Part | None,
    ) -> None:
        return None

    def relax_host(
        self, model: RelaxModel, host: int, z: cp_model.IntVar, request: Request
    ) -> None:
        return None

    def relax_capacity(self, fleet: IndexedFleet, host: int, slot: int, name: str) -> int | None:
        return None

    def relax_finish(self, model: RelaxModel) -> None:
        return None

    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None:
        return None

    def owners(self, host: ComputeHostDescriptor) -> Iterable[str]:
        return ()

    def link_kbps(self, table: T, host: int) -> int | None:
        """What a host carries between members of a VNF on it, kbit/s (None: this kind does not
        carry them; `UNLIMITED_KBPS`: no figure)."""
        return None

    def fullness(self, table: T) -> Fullness | None:
        return None

    def room(self, table: T) -> IntArray | None:
        """Per host and node slot, what a cpu-set could take of the leading measure."""
        return None

    def kept(self, table: T, request: Request) -> Kept | None:
        return None

    def node_fullness(self, free: F, slot: int) -> NodeFullness | None:
        return None

    def node_kept(self, free: F, slot: int, request: Request, cs: CpuSetDemand) -> int:
        return 0
