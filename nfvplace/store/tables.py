"""SQLAlchemy tables of the placement store.

The database itself refuses a double claim: every exclusively held resource (a PU, an SR-IOV VF, a
dedicated port, a PCI device) is one row of `claims` with a UNIQUE (host, kind, resource) constraint,
and hugepages are counters per (host, NUMA node, page size) that are only ever raised by a conditional
UPDATE that keeps them within capacity. Every write that changes what a host has free also bumps the
host's `generation` (compare-and-swap), so a placement computed on a stale snapshot cannot commit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    String,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# `json` on PostgreSQL too (migration 0003): documents are written and read whole, never queried
JsonType = JSON()

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class HostRow(Base):
    """A host: the CHD its agent reported, its availability after claims, and its generation.

    `available` caches the CHD with its live placements claimed, exact as of
    `available_generation`; readers bring it up to date, and one function writes it
    (`availability.py`)."""

    __tablename__ = "hosts"

    id: Mapped[str] = mapped_column(String(255), primary_key=True)
    chd: Mapped[dict[str, Any]] = mapped_column(JsonType, nullable=False)
    available: Mapped[dict[str, Any]] = mapped_column(JsonType, nullable=False)
    generation: Mapped[int] = mapped_column(BigInteger, nullable=False)
    available_generation: Mapped[int] = mapped_column(
        BigInteger, nullable=False, server_default="0"
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    change_seq: Mapped[int] = mapped_column(
        BigInteger, nullable=False, server_default="0", index=True
    )


class ChangeCounterRow(Base):
    """One row: the number of the last change to any host, on SQLite (PostgreSQL stamps
    transaction ids instead: see `changes`)."""

    __tablename__ = "change_counter"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    seq: Mapped[int] = mapped_column(BigInteger, nullable=False)


class DeletedHostRow(Base):
    """A host deleted at change number `change_seq` (so that every worker forgets it), and its
    generation then: created again, the host goes on from there (a generation names one version
    of a host, whatever was deleted between)."""

    __tablename__ = "deleted_hosts"

    host_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    change_seq: Mapped[int] = mapped_column(BigInteger, nullable=False, index=True)
    generation: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class PlacementRow(Base):
    """A placement: its answer, its configurations, and (once released) when it was released."""

    __tablename__ = "placements"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(255), unique=True, nullable=True)
    # sha256 of a keyed request's body, checked on replay ("" for a request without a key)
    request_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    response: Mapped[dict[str, Any]] = mapped_column(JsonType, nullable=False)
    configurations: Mapped[list[dict[str, Any]]] = mapped_column(JsonType, nullable=False)
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    descriptor: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    released_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True, index=True
    )


class PlacementHostRow(Base):
    """Which hosts a live placement holds resources on."""

    __tablename__ = "placement_hosts"

    placement_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("placements.id"), primary_key=True
    )
    host_id: Mapped[str] = mapped_column(
        String(255), ForeignKey("hosts.id"), primary_key=True, index=True
    )
    # the host generation the placement's commit made (see HostRow.available_generation)
    generation: Mapped[int] = mapped_column(BigInteger, nullable=False, server_default="0")


class PlacementInstanceRow(Base):
    """One VM Configuration of a live placement: its owner (instance id), host and VM name."""

    __tablename__ = "placement_instances"

    placement_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("placements.id"), primary_key=True
    )
    owner: Mapped[str] = mapped_column(String(512), primary_key=True, index=True)
    host_id: Mapped[str] = mapped_column(String(255), nullable=False, index=True)
    vm: Mapped[str] = mapped_column(String(255), nullable=False, index=True)


class ClaimRow(Base):
    """One exclusively held resource: (host, kind, resource) is unique across all placements."""

    __tablename__ = "claims"
    __table_args__ = (UniqueConstraint("host_id", "kind", "resource", name="uq_claims_resource"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    placement_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("placements.id"), nullable=False, index=True
    )
    host_id: Mapped[str] = mapped_column(String(255), ForeignKey("hosts.id"), nullable=False)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    resource: Mapped[str] = mapped_column(String(64), nullable=False)


class HugepagePoolRow(Base):
    """Hugepages of one (host, node, size): capacity the host reported free, and pages claimed."""

    __tablename__ = "hugepage_pools"

    host_id: Mapped[str] = mapped_column(String(255), ForeignKey("hosts.id"), primary_key=True)
    numa_node: Mapped[int] = mapped_column(Integer, primary_key=True)
    size_kib: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    capacity: Mapped[int] = mapped_column(BigInteger, nullable=False)
    claimed: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)


class HugepageClaimRow(Base):
    """Hugepages one placement holds on one (host, node, size)."""

    __tablename__ = "hugepage_claims"

    placement_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("placements.id"), primary_key=True
    )
    host_id: Mapped[str] = mapped_column(String(255), ForeignKey("hosts.id"), primary_key=True)
    numa_node: Mapped[int] = mapped_column(Integer, primary_key=True)
    size_kib: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    count: Mapped[int] = mapped_column(BigInteger, nullable=False)


class K8sAssumedPodRow(Base):
    """A pod bound to a node whose NodeResourceTopology does not show it yet: what it takes there
    (`nodes`: its one node -> resource -> NUMA node -> amount)."""

    __tablename__ = "k8s_assumed_pods"

    uid: Mapped[str] = mapped_column(String(128), primary_key=True)
    pod: Mapped[str] = mapped_column(String(512), nullable=False)
    nodes: Mapped[dict[str, Any]] = mapped_column(JsonType, nullable=False)
    # the one node of `nodes`, for the reads of one node (migration 0014)
    node: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    expires_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, index=True
    )
    # seen running: no longer assumed from `running_until` on, once the node's counts were
    # reconciled past `assumed_generation`, the one the pod was decided on (migration 0011)
    assumed_generation: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    running_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # the node's NodeResourceTopology accounts for it: it counts no more, and the row stays a
    # while (store/assumed.py ACCOUNTED_KEPT_S) so that the pod watch, seeing the pod bound after
    # that, does not assume it again (migration 0013)
    accounted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # the change number (`k8s_lock.seq`) that last wrote it, for the workers that keep the pods
    # parsed (store/assumed_cache.py; migration 0015)
    change_seq: Mapped[int | None] = mapped_column(BigInteger, nullable=True, index=True)


class K8sAssumedGoneRow(Base):
    """A pod forgotten (its row deleted) at change number `change_seq`, so that every worker
    forgets it too (store/assumed_cache.py; pruned now and then, `K8sLockRow.gone_below`)."""

    __tablename__ = "k8s_assumed_gone"

    change_seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    uid: Mapped[str] = mapped_column(String(128), primary_key=True)


class K8sNodeViewRow(Base):
    """A node's baseline for its assumed pods: the host generation last reconciled and its free
    totals from before the oldest pod still assumed there (resource -> amount; store/assumed.py),
    whether that object told which pods it shows (its pod fingerprint matched), and when it did
    not, its fingerprint and free totals, to match again when the pod watch sees more."""

    __tablename__ = "k8s_node_views"

    node: Mapped[str] = mapped_column(String(255), primary_key=True)
    generation: Mapped[int] = mapped_column(BigInteger, nullable=False)
    free: Mapped[dict[str, Any]] = mapped_column(JsonType, nullable=False)
    change_seq: Mapped[int | None] = mapped_column(BigInteger, nullable=True, index=True)
    # its last object carried a pod fingerprint matching the pods known there (migration 0016)
    signed: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=false())
    # {"print": fingerprint, "free": totals} of that object when it matched no pod set (0017)
    unmatched: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)


class K8sDepartedRow(Base):
    """A pod the pod watch saw leave `node` that no NodeResourceTopology of the node has shown
    gone yet, and what it took there (resource -> amount over the node's NUMA nodes): the
    Kubernetes door's filter answers "retry" where that room would take the pod
    (integrations/kubernetes/departed.py; migration 0018)."""

    __tablename__ = "k8s_departed_pods"

    uid: Mapped[str] = mapped_column(String(128), primary_key=True)
    node: Mapped[str] = mapped_column(String(255), nullable=False, index=True)
    pod: Mapped[str] = mapped_column(String(512), nullable=False)  # namespace/name
    takes: Mapped[dict[str, Any]] = mapped_column(JsonType, nullable=False)
    left_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class K8sLockRow(Base):
    """One row: every write of the assumed pods updates it first, so that the decisions of all
    workers and replicas (and the assumed pods they record) are taken one after the other; `seq`
    numbers those writes (store/assumed_cache.py), and the pods forgotten at or below
    `gone_below` may have lost their `K8sAssumedGoneRow`."""

    __tablename__ = "k8s_lock"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    gone_below: Mapped[int] = mapped_column(BigInteger, nullable=False, server_default="0")


class ReadinessProbeRow(Base):
    """One row `/readyz` writes to learn that the database accepts writes."""

    __tablename__ = "readiness_probe"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    probed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
