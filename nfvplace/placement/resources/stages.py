"""The stage protocols: what a resource kind implements to take part in each stage of placement.

A kind (CPUs, memory, NICs, ...) is one module under `placement/resources/`; the registry
(`resources/__init__.py`) lists them. Each stage is a small protocol below (`Decides` lives in
`kind.py`, the policy scores' in `scoring.py`), and loops over the kinds that implement it
(`resources.implementing`, or an ordered tuple where the order decides an answer). A kind is in
a stage exactly when it has its methods.

| stage | protocols (methods) | who loops |
|---|---|---|
| index columns | `Terms`, `Seeds`, `Columns` (`new_table`, `fill`), `ColumnsKept`, `ColumnsClaimed`, `ColumnsChanged` | `index/` |
| free resources of a host | `Free` (`free`, `free_again`), `FreeClaimed` (`free_claimed`) | `index/free.py` |
| variants a host matches | `Variants` (`variant_hosts`) | `engine/variants.py` |
| filter (every host at once) | `HostChecks` (`host_checks`), `NodeNeeds` (`node_needs`) | `engine/filter.py` |
| choices made without the model | `Decides` (`decide`) | `engine/attempt.py` |
| exact model (CP-SAT) | `ModelGate`, `ModelDemand`, `ModelLimits`, `ModelCosts` | `engine/solver.py` |
| exact model without CP-SAT | `ModelDirect` (`direct`) | `engine/direct.py` |
| exact ids | `Assigns` (`assign`), `Explains` (`explain`) | `engine/assign.py`, `attempt.py` |
| counting model (capacity) | `CountGate`, `CountTakes` (`count_state`, `count_take`), `CountCaps` | `joint/counting.py` |
| relaxation (joint) | `RelaxSlots`, `RelaxNodes`, `RelaxHosts`, `RelaxCapacity`, `RelaxFinish` | `joint/relaxation.py` |
| claim and release on a CHD | `Claims` (`claim`), `Owners` (`owners`) | `claims.py` |
| the store's double-claim guard | `HoldsUnits` (`held_units`), `HoldsShares` (`held_shares`, `pools`) | `store/resources.py` |
| a running VM's descriptor | `Describes` (`describe`) | `joint/moves.py` |
| the kubelet's counts (Kubernetes) | `KubeletCounts` (`kubelet_pools`) | `integrations/kubernetes/state.py` |
| links between a VNF's members | `Links` (`link_kbps`) | `joint/state.py` |
| policy scores | `Fills`, `Room`, `Keeps`, `NodeFills`, `NodeKeeps` | `engine/policies/` |

Every rejection a kind gives carries one of its `reasons` (`placement/reasons.py`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Protocol, runtime_checkable

from ortools.sat.python import cp_model

from ...models.chd import ComputeHostDescriptor, NumaNode
from ...models.configuration import VmConfiguration
from ...models.vmd import VariantMatch
from ..reasons import Reason
from ..request import Part, Request
from ..result import ExplainRow
from .base import BoolArray, FreeKey, HostFree, IndexedFleet, Table, TableKey, Vocabulary
from .direct import Assignment, DirectPart, NoAnswer
from .draft import ConfigurationDraft, DescriptorDraft, HostDraft
from .filtering import FilterInput, HostCheck, NodeNeed
from .holding import HeldUnit, PoolShare
from .kind import Decides, Decisions, Named, RelaxModel
from .kubelet import KubeletPool
from .model import Layout, ModelContext
from .scoring import Fills, Keeps, NodeFills, NodeKeeps, Room

# index columns (`index/fleet.py`)


@runtime_checkable
class Terms(Named, Protocol):
    def vocabulary(self, host: ComputeHostDescriptor) -> Iterable[tuple[str, Hashable]]: ...


@runtime_checkable
class Seeds(Named, Protocol):
    @property
    def seed_terms(self) -> Mapping[str, tuple[Hashable, ...]]: ...  # terms every fleet has


@runtime_checkable
class Columns[T: Table](TableKey[T], Protocol):
    def fill(
        self, table: T, i: int, host: ComputeHostDescriptor, free: HostFree, vocab: Vocabulary
    ) -> None:
        """Host i's row. A kind that implements `Free` reads of `host` only what no claim
        writes (its processor, its totals), the rest from its free part: after a claim the index
        refills its row only when that part changed (`free_again` hands back the part it was
        given when nothing it reads changed)."""
        ...


@runtime_checkable
class ColumnsKept(Named, Protocol):
    def columns_kept(self, host: ComputeHostDescriptor, before: ComputeHostDescriptor) -> bool:
        """Whether the row a kind with no free part filled from `before` holds for `host`, a new
        version a claim or a release made: what its columns read of it are the same objects."""
        ...


@runtime_checkable
class ColumnsClaimed[T: Table](TableKey[T], Protocol):
    def columns_claimed(
        self,
        table: T,
        i: int,
        host: ComputeHostDescriptor | None,
        before: ComputeHostDescriptor,
        config: VmConfiguration,
    ) -> bool:
        """For a kind with no free part: host i's row once `config` is claimed on `before`
        (`host`), updated from the configuration; False: nothing written (`fill`). `host` None:
        the claim is kept pending (`index/pending.py`, a claim the kinds' `free_claimed` took),
        `before` the descriptor held: False is then an internal error."""
        ...


@runtime_checkable
class ColumnsChanged[T: Table](TableKey[T], Protocol):
    def fill_changed(
        self, table: T, i: int, free: HostFree, before: HostFree, vocab: Vocabulary
    ) -> None:
        """For a kind with a free part: host i's row, filled from `before` (the same node ids),
        once the part is `free`'s: only what changed worked again (the nodes whose part is not
        the same object), the row then what `fill` gives."""
        ...


# free resources of one host (`index/free.py`)


@runtime_checkable
class Free[F](FreeKey[F], Protocol):
    def free_again(
        self, host: ComputeHostDescriptor, before: ComputeHostDescriptor, free_before: F
    ) -> F:
        """`free(host)` of a new version of `before` (same node ids), whose part was `free_before`:
        what it derived from objects the new version still holds may be kept, and `free_before`
        itself handed back when nothing it reads changed (the index then refills no column)."""
        ...


@runtime_checkable
class FreeClaimed[F](FreeKey[F], Protocol):
    def free_claimed(
        self,
        before: ComputeHostDescriptor,
        free_before: F,
        config: VmConfiguration,
        after: ComputeHostDescriptor | None,
    ) -> F | None:
        """The part after `config` is claimed on `before` (whose part was `free_before`; `after`
        is the claimed host), from the configuration where it tells, equal to `free_again` of
        `after`: `free_before` itself when the claim changes nothing the kind reads, None when
        only reading `after` again tells (`free_again`). A claim changes no PU's package.
        `after` None: the claim is to be kept pending (`index/pending.py`): `before` is the
        descriptor held, read only for what no claim writes, and None also when `config` takes
        anything `free_before` does not show free (the claim is made at once, and refused)."""
        ...


@runtime_checkable
class Variants[T: Table](TableKey[T], Protocol):
    def variant_hosts(self, table: T, vocab: Vocabulary, match: VariantMatch) -> BoolArray | None:
        """The hosts that meet what `match` asks of this kind (None: it asks nothing of it)."""
        ...


@runtime_checkable
class HostChecks(Named, Protocol):
    def host_checks(self, inp: FilterInput) -> list[HostCheck]: ...


@runtime_checkable
class NodeNeeds(Named, Protocol):
    def node_needs(self, inp: FilterInput, part: Part) -> list[NodeNeed]: ...


@runtime_checkable
class ModelGate(Named, Protocol):
    def in_model(self, request: Request) -> bool: ...  # whether the request needs the model


@runtime_checkable
class ModelDemand(Named, Protocol):
    def post_demand(self, ctx: ModelContext) -> None: ...  # usage terms, before any limit


@runtime_checkable
class ModelLimits(Named, Protocol):
    @property
    def family(self) -> str: ...  # what its limits are, in words (`blame`)
    def post_limits(self, ctx: ModelContext) -> None: ...


@runtime_checkable
class ModelCosts(Named, Protocol):
    @property
    def costs(self) -> Mapping[str, str]: ...  # the objective's parts it adds, and what they count


@runtime_checkable
class ModelDirect(Named, Protocol):
    def direct(self, a: Assignment) -> DirectPart | NoAnswer:
        """The kind's part of the exact model's answer with the assignment's nodes fixed, worked
        out without CP-SAT (`direct.py`): only when it is the one CP-SAT would give."""
        ...


# exact ids and their explanation (`engine/assign.py`, `engine/attempt.py`)


@runtime_checkable
class Assigns(Named, Protocol):
    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None: ...


@runtime_checkable
class Explains(Named, Protocol):
    def explain(
        self, free: HostFree, request: Request, layout: Layout | None, decisions: Decisions
    ) -> list[ExplainRow]: ...


@runtime_checkable
class CountGate(Named, Protocol):
    def counts(self, request: Request) -> bool: ...  # False: the engine counts this request


@runtime_checkable
class CountTakes[S](Named, Protocol):
    def count_state(self, fleet: IndexedFleet, i: int, slot: int, request: Request) -> S | None:
        """What the kind counts on node `slot` of host i (None: nothing for this request)."""
        ...

    def count_take(self, state: S, request: Request, spread: bool) -> Reason | None:
        """Take one instance from `state`, or say what is missing."""
        ...


@runtime_checkable
class CountCaps(Named, Protocol):
    def count_caps(
        self, fleet: IndexedFleet, i: int, request: Request
    ) -> list[tuple[Reason, int]]: ...  # host-wide limits on the count


@runtime_checkable
class RelaxSlots(Named, Protocol):
    def relax_slot_ok(
        self, fleet: IndexedFleet, i: int, slot: int, request: Request, part: Part
    ) -> bool: ...


@runtime_checkable
class RelaxNodes(Named, Protocol):
    def relax_add(
        self,
        model: RelaxModel,
        host: int,
        slot: int,
        x: cp_model.IntVar,
        request: Request,
        part: Part | None,
    ) -> None: ...


@runtime_checkable
class RelaxHosts(Named, Protocol):
    def relax_host(
        self, model: RelaxModel, host: int, z: cp_model.IntVar, request: Request
    ) -> None: ...


@runtime_checkable
class RelaxCapacity(Named, Protocol):
    def relax_capacity(
        self, fleet: IndexedFleet, host: int, slot: int, name: str
    ) -> int | None: ...  # None: the kind constrains that use itself (`relax_finish`)


@runtime_checkable
class RelaxFinish(Named, Protocol):
    def relax_finish(self, model: RelaxModel) -> None: ...


# claims (`claims.py`)


@runtime_checkable
class Claims(Named, Protocol):
    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None: ...


@runtime_checkable
class Owners(Named, Protocol):
    def owners(self, host: ComputeHostDescriptor) -> Iterable[str]: ...


@runtime_checkable
class HoldsUnits(Named, Protocol):
    def held_units(self, config: VmConfiguration) -> Iterable[HeldUnit]:
        """Every unit of `config.host` that `config` holds alone (`holding.py`)."""
        ...


@runtime_checkable
class HoldsShares(Named, Protocol):
    def held_shares(self, config: VmConfiguration) -> Iterable[PoolShare]:
        """How many units of each pool of alike units of `config.host` `config` takes
        (`holding.py`)."""
        ...

    def pools(self, host: ComputeHostDescriptor) -> Iterable[PoolShare]:
        """Each pool of `host` with the units free in it as the host reports them."""
        ...


@runtime_checkable
class KubeletCounts(Named, Protocol):
    def kubelet_pools(self, host: ComputeHostDescriptor, node: NumaNode) -> Iterable[KubeletPool]:
        """The pools of `node` as the kubelet's managers count them, in the order they are named
        (`kubelet.py`; the Kubernetes door)."""
        ...


# joint search: a running VM's descriptor (`joint/moves.py`)


@runtime_checkable
class Describes(Named, Protocol):
    def describe(self, draft: DescriptorDraft, config: VmConfiguration) -> None:
        """Ask, in `draft`, for everything of this kind that `config` holds."""
        ...


# joint search: links between members of a VNF on one host (`joint/state.py`)


@runtime_checkable
class Links[T: Table](TableKey[T], Protocol):
    def link_kbps(self, table: T, host: int) -> int | None:
        """A host's kbit/s between members of a VNF on it (`UNLIMITED_KBPS`: no figure)."""
        ...


STAGES: tuple[type, ...] = (
    Terms,
    Seeds,
    Columns,
    ColumnsKept,
    ColumnsClaimed,
    ColumnsChanged,
    Free,
    FreeClaimed,
    Variants,
    HostChecks,
    NodeNeeds,
    Decides,
    ModelGate,
    ModelDemand,
    ModelLimits,
    ModelCosts,
    ModelDirect,
    Assigns,
    Explains,
    CountGate,
    CountTakes,
    CountCaps,
    RelaxSlots,
    RelaxNodes,
    RelaxHosts,
    RelaxCapacity,
    RelaxFinish,
    Claims,
    Owners,
    HoldsUnits,
    HoldsShares,
    KubeletCounts,
    Describes,
    Links,
    Fills,
    Room,
    Keeps,
    NodeFills,
    NodeKeeps,
)
"""Every stage protocol (docs/adding-a-resource-kind.md lists them; tests/test_architecture.py
checks that no kind implements one by doing nothing)."""
