"""What placement returns: configurations, or a diagnosis of why nothing fits.

These types are the contract between the placement engine and its callers (the CLI, the REST service,
notebooks). Extend them, do not rename fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast, runtime_checkable

from .. import errors, hooks
from ..errors import Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why one host (or one of its NUMA nodes) cannot take the VM.

    `reason` is a stable short code (e.g. `hugepages`, `core_pairs`, `sriov_vf`, `capability`) used to
    group hosts in the summary; `message` carries the numbers ("NUMA 1: 3 free core pairs, cpu-set 0
    needs 4"); `summary` is the phrase used in the one-line summary ("lack 1 GiB hugepages on any node").
    """

    host: str
    reason: str
    message: str
    summary: str
    requested: float | None = None
    available: float | None = None
    stage: str = "filter"


# A Rejection's fields in their order: what the engine's diagnosis builds per host before (and
# unless) someone reads the Rejection objects
RejectionRow = tuple[str, str, str, str, float | None, float | None, str]


def rejection_row(r: Rejection) -> RejectionRow:
    return (r.host, r.reason, r.message, r.summary, r.requested, r.available, r.stage)


def rejection_dict(row: RejectionRow) -> dict[str, object]:
    """One rejection as JSON data (`Diagnosis.to_dict`; the service's kept 409 rows,
    `service.refusals`), its reason a plain `str` (see `Diagnosis.to_dict`)."""
    host, reason, message, _, requested, available, stage = row
    return {
        "host": host,
        "reason": str(reason),
        "message": message,
        "requested": requested,
        "available": available,
        "stage": stage,
    }


@runtime_checkable
class HasRows(Protocol):
    """Rejections that give their rows without making Rejection objects (the engine's lazy
    `RejectionList`)."""

    def rows(self) -> tuple[RejectionRow, ...]: ...


@dataclass(frozen=True, slots=True)
class ExplainRow:
    """One line of why a placement went where it did: `topic` (what is measured), `value` (the
    figure, as text) and `meaning` (what the figure counts, in words)."""

    topic: str
    value: str
    meaning: str = ""

    def line(self) -> str:
        return f"{self.topic}: {self.value}" + (f" ({self.meaning})" if self.meaning else "")


@dataclass(frozen=True, slots=True)
class Diagnosis:
    hosts_considered: int
    hosts_fitting: int
    rejections: Sequence[Rejection]  # a tuple, or a sequence built lazily on first access
    summary: str  # "0/120 hosts fit: 80 have no NUMA node with ..., 40 lack a free VF on ..."
    closest: tuple[str, ...] = ()  # joint placement: the hosts that came closest, best first

    def to_dict(self) -> dict[str, object]:
        """The diagnosis as JSON data, each reason a plain `str`: pydantic-core's `to_json` of a
        1,000-host diagnosis took six times as long with `Reason` members as with their values."""
        closest = {"closest": list(self.closest)} if self.closest else {}
        rejections = self.rejections
        rows = (
            rejections.rows()
            if isinstance(rejections, HasRows)
            else [rejection_row(r) for r in rejections]
        )
        return {
            "summary": self.summary,
            "hosts_considered": self.hosts_considered,
            "hosts_fitting": self.hosts_fitting,
            **closest,
            "rejections": [rejection_dict(row) for row in rows],
        }

    def _repr_html_(self) -> str:
        """The summary and one row per rejected host, in notebooks (`nfvplace.notebook` lends it)."""
        return cast(str, hooks.lent(hooks.DIAGNOSIS_HTML)(self))


@dataclass(frozen=True, slots=True)
class Unplaced:
    """A unit that `mode="max"` left out: the member, its instance, and why (the engine's summary)."""

    member: str
    instance: int  # 1-based
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"member": self.member, "instance": self.instance, "reason": self.reason}


class NoFitError(NfvplaceError):
    """No host can take the VM; `diagnosis` says why, host by host."""

    diagnosis: Diagnosis


@dataclass(frozen=True)
class PlacementResult:
    """The outcome of `place`: configurations (one per VM) or a diagnosis.

    `hosts` holds the updated availability of every host the placement used, so that a caller can
    place the next VM on them.
    """

    configurations: tuple[VmConfiguration, ...] = ()
    hosts: Mapping[str, ComputeHostDescriptor] = field(default_factory=dict)
    diagnosis: Diagnosis | None = None
    explanation: tuple[str, ...] = ()  # `explain=True`: one line per row of `explain_rows`
    explain_rows: tuple[ExplainRow, ...] = ()  # the same as data: topic, value, meaning
    unplaced: tuple[Unplaced, ...] = ()  # mode="max": the instances that did not fit, and why

    @property
    def ok(self) -> bool:
        return bool(self.configurations) and self.diagnosis is None

    @property
    def configuration(self) -> VmConfiguration:
        """The single VM's configuration (raises NoFitError when nothing fits)."""
        self.raise_for_status()
        return self.configurations[0]

    def _repr_svg_(self) -> str | None:
        """In notebooks: each host used, drawn with the VMs placed on it (nothing when none fits)."""
        if not self.ok:
            return None
        ids = dict.fromkeys(c.host for c in self.configurations)
        hosts = [self.hosts[i] for i in ids if i in self.hosts]
        if not hosts:
            return None
        return cast(str, hooks.lent(hooks.HOSTS_SVG)(hosts, self.configurations, title="placement"))

    def _repr_html_(self) -> str | None:
        """In notebooks: why nothing fits (the picture is `_repr_svg_` when something does)."""
        return None if self.ok or self.diagnosis is None else self.diagnosis._repr_html_()

    def raise_for_status(self) -> None:
        if self.ok:
            return
        diagnosis = self.diagnosis or Diagnosis(0, 0, (), "no host given")
        error = NoFitError(
            errors.PLACEMENT_NO_FIT,
            diagnosis.summary,
            issues=tuple(Issue(r.message, path=r.host) for r in diagnosis.rejections),
        )
        error.diagnosis = diagnosis
        raise error
