"""Reasons: per host the first blocking reason with numbers, and the one-line summary.

The summary groups hosts by the phrase of their reason and lists the groups by count, largest first:
`0/120 hosts fit: 80 have no NUMA node with 4 free 1 GiB pages and 8 free core pairs, 40 lack a free VF
on a ≥ 25 Gbps port`. Per-host messages (with the numbers of that host) are built only when someone
reads `Diagnosis.rejections`, so that a rejection over 10,000 hosts costs no more than an acceptance,
and say the host as it was when the placement was refused, whenever they are read (`rejections`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from ..index import FleetIndex
from ..reasons import Reason
from ..resources.base import IntArray
from ..resources.filtering import NodeNeed, in_units
from ..resources.rows import rows_any
from ..result import Diagnosis, RejectionRow
from .filter import CountRecord, FilterOutcome, HostCheckRecord, NodeRecord
from .rejections import Builder, Group, LiveGroup, RejectionList, RowsOf

NIC_CODES = (Reason.sriov_vf, Reason.sriov_bandwidth, Reason.dedicated_port)

FILTER = "filter"  # the stage of every rejection made here


class Reasons:
    """Collects rejection groups (counted eagerly) and their per-host messages (built lazily:
    `RejectionList`)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self.builders: list[Group] = []
        self._pending: list[FilterOutcome] = []

    @property
    def counts(self) -> Counter[str]:
        """Hosts per summary phrase (filter outcomes are grouped only when first asked)."""
        while self._pending:
            self._group(self._pending.pop(0))
        return self._counts

    def add(self, phrase: str, count: int, build: Builder) -> None:
        """A group whose rejections say what was known when it was refused: `build` must read
        nothing the index rewrites (columns, descriptors, free resources); else `add_live`."""
        if count:
            self._counts[phrase] += count
            self.builders.append(build)

    def add_live(
        self, phrase: str, fleet: FleetIndex, hosts: IntArray, rows_of: RowsOf, code: str
    ) -> None:
        """A group whose rejections word each host from what `fleet` holds of it: a host's row is
        built before `fleet` rewrites it, if the result is still kept then (`LiveGroup`). Its
        rows say of the request only what `phrase` and `code` say, beside the request's own
        numbers (the group's key across refusals of the same request)."""
        if len(hosts):
            self._counts[phrase] += len(hosts)
            self.builders.append(LiveGroup(fleet, hosts, rows_of, (phrase, str(code))))

    def add_outcome(self, outcome: FilterOutcome) -> None:
        """Record a filter outcome; a placement that succeeds never pays for its grouping."""
        if outcome.records:
            self._pending.append(outcome)

    def _group(self, outcome: FilterOutcome) -> None:
        for record in outcome.records:
            if isinstance(record, HostCheckRecord):
                self._host(outcome.fleet, record)
            elif isinstance(record, CountRecord):
                self._count(outcome.fleet, record)
            else:
                self._node(outcome.fleet, record)

    def _host(self, fleet: FleetIndex, record: HostCheckRecord) -> None:
        check = record.check

        def rows_of(hosts: IntArray) -> list[RejectionRow]:
            out: list[RejectionRow] = []
            ids, code, summary = fleet.host_ids, check.code, check.summary
            for i in hosts.tolist():
                message, requested, available = check.detail(i)  # reads the index as it is
                out.append((ids[i], code, message, summary, requested, available, FILTER))
            return out

        self.add_live(check.summary, fleet, record.hosts, rows_of, check.code)

    def _count(self, fleet: FleetIndex, record: CountRecord) -> None:
        # the counts were taken by the filter (`record.available`, an array of its own): nothing
        # read here is rewritten by the index
        def build() -> list[RejectionRow]:
            return [
                (
                    fleet.host_ids[i],
                    record.code,
                    f"{int(record.available[i])} NUMA nodes can take a cpu-set, "
                    f"{record.needed} distinct ones are needed",
                    record.summary,
                    float(record.needed),
                    float(record.available[i]),
                    FILTER,
                )
                for i in record.hosts.tolist()
            ]

        self.add(record.summary, len(record.hosts), build)

    def _node(self, fleet: FleetIndex, record: NodeRecord) -> None:
        hosts = record.hosts
        exists = fleet.node_id[hosts] >= 0
        needs = record.needs
        if not needs:
            return
        # one key per host: the first need that no node meets (>= 0), else -(mask + 1) where the
        # mask has a bit for every need some node misses (a combination); each need is only looked
        # at for the hosts no earlier need explained
        keys = np.empty(len(hosts), dtype=np.int64)
        pos = np.arange(len(hosts))
        for k, need in enumerate(needs):
            if not len(pos):
                break
            sub = hosts[pos]
            short = ~rows_any(need.ok[sub] & exists)
            keys[pos[short]] = k
            pos = pos[~short]
            exists = exists[~short]
        if len(pos):
            sub = hosts[pos]
            bits = np.zeros(len(pos), dtype=np.int64)
            for k, need in enumerate(needs):
                bits |= rows_any(~need.ok[sub] & exists).astype(np.int64) << k
            keys[pos] = -(bits + 1)
        where = f" for cpu-set {record.cpu_set}" if record.many_cpu_sets else ""
        uniq, inverse = np.unique(keys, return_inverse=True)
        for g, key_value in enumerate(uniq.tolist()):
            positions = np.flatnonzero(inverse == g)
            is_single = key_value >= 0
            key = key_value if is_single else -key_value - 1
            if is_single:
                need = needs[key]
                if need.code in NIC_CODES:
                    phrase = f"lack {need.phrase}{where}"
                else:
                    phrase = f"have no NUMA node with {need.phrase}{where}"
                code = need.code
            else:
                chosen = [n for k, n in enumerate(needs) if key >> k & 1] or list(needs)
                phrase = f"have no NUMA node with {' and '.join(n.phrase for n in chosen)}{where}"
                code = Reason.numa_combination
            self.add_live(
                phrase,
                fleet,
                hosts[positions],
                self._node_builder(fleet, record, is_single, key, phrase, code),
                code,
            )

    @staticmethod
    def _node_builder(
        fleet: FleetIndex, record: NodeRecord, is_single: bool, key: int, phrase: str, code: str
    ) -> RowsOf:
        label = "the VM" if record.cpu_set is None else f"cpu-set {record.cpu_set}"
        # the node ids as the filter saw them: a rebuilt index (a host added) has new arrays,
        # maybe wider, while the needs' columns are those of the filter
        node_id = fleet.node_id

        def rows_of(hosts: IntArray) -> list[RejectionRow]:
            ids = fleet.host_ids
            if is_single:
                need = record.needs[key]
                return _best_node_rejections(ids, node_id, need, hosts, label, phrase, code)
            chosen = [n for k, n in enumerate(record.needs) if key >> k & 1]
            return _combination_rejections(ids, node_id, chosen, hosts, label, phrase, code)

        return rows_of

    def diagnosis(self, considered: int, fitting: int) -> Diagnosis:
        counts = self.counts
        return Diagnosis(
            hosts_considered=considered,
            hosts_fitting=fitting,
            rejections=RejectionList(self.builders),
            summary=summary_line(considered, fitting, counts),
        )


def summary_line(considered: int, fitting: int, counts: Counter[str]) -> str:
    head = f"{fitting}/{considered} hosts fit"
    if not considered:
        return f"{head}: no host given"
    if not counts:
        return head
    parts = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return f"{head}: " + ", ".join(f"{n} {phrase}" for phrase, n in parts)


# A refused request over a thousand hosts materialises a rejection per host: the numbers are read
# from the index as whole arrays (reading numpy one element at a time took about 10 ms a refusal)


def _best_node_rejections(
    ids: list[str],
    node_id: IntArray,
    need: NodeNeed,
    hosts: IntArray,
    label: str,
    phrase: str,
    code: str,
) -> list[RejectionRow]:
    """Per host, the need and what its best node (the first with the most) has of it."""
    one = None
    if len(hosts) == 1:  # a pin (`LiveGroup.keep`): one host, read as Python numbers (a fifth)
        i = int(hosts[0])
        one = _best_node_of(node_id[i].tolist(), in_units(need, hosts)[0].tolist())
    if one is not None:
        found: Iterable[tuple[int, int, float]] = [(int(hosts[0]), *one)]
    else:
        nodes = node_id[hosts]
        available = np.where(nodes >= 0, in_units(need, hosts), -np.inf)
        best = available.argmax(axis=1)
        rows = np.arange(len(hosts))
        found = zip(
            hosts.tolist(), nodes[rows, best].tolist(), available[rows, best].tolist(), strict=True
        )
    head = f"{label} needs {need.phrase}; the best NUMA node ("
    unit, requested = need.unit, need.requested
    return [
        (ids[i], code, f"{head}{node}) has {have:g} {unit}", phrase, requested, have, FILTER)
        for i, node, have in found
    ]


def _best_node_of(nodes: list[int], available: list[float]) -> tuple[int, float] | None:
    """The first node with the most, as `argmax` finds it over the nodes that exist (None: no
    node, or a NaN: the arrays' answer stands)."""
    best: tuple[int, float] | None = None
    for node, value in zip(nodes, available, strict=True):
        have = float(value)
        if have != have:
            return None
        if node >= 0 and (best is None or have > best[1]):
            best = (node, have)
    return best


def _combination_rejections(
    ids: list[str],
    node_id: IntArray,
    chosen: Sequence[NodeNeed],
    hosts: IntArray,
    label: str,
    phrase: str,
    code: str,
) -> list[RejectionRow]:
    """Per host, the needs no single node meets and what each of its nodes has of them."""
    nodes = node_id[hosts].tolist()
    columns = [(in_units(n, hosts).tolist(), n.unit) for n in chosen]
    head = (
        f"{label} needs {' and '.join(n.phrase for n in chosen)} on one NUMA node; no node has all"
    )
    out: list[RejectionRow] = []
    for row, i in enumerate(hosts.tolist()):
        per_node = "; ".join(
            f"node {node}: " + ", ".join(f"{values[row][j]:g} {unit}" for values, unit in columns)
            for j, node in enumerate(nodes[row])
            if node >= 0
        )
        out.append((ids[i], code, f"{head} ({per_node})", phrase, None, None, FILTER))
    return out
