"""A CHD's long lists as columns: how the scheduler plug-in sends a host. Standard library only.

A CHD holds one object per PU (and per SR-IOV VF), each a handful of fields of which most repeat
from one PU to the next: a thousand hosts of a hundred PUs are a hundred thousand objects to write,
hash, read and validate, for a filter pass that Nova's own NUMA filter makes in 1-2 ms a host.
On the wire to `POST /v1/evaluations` (a host's `chd`), a NUMA node's `cpus` and a port's `vfs`
may instead be one object of columns:

    {"id": [4, 5, 36], "core": [4, 5, 4], "siblings": [[4, 36], [5, 37], [4, 36]],
     "template": [0, 1, 0], "templates": [{"state": "dedicated", "owner": "nova"}, {}]}

Each key but `template` and `templates` is a field of the row, with one value per row (every
column as long as the others); `templates` are the rows' other fields, and `template[i]` says
which one row i takes (both may be left out). Row i is `templates[template[i]]` with each column's
i-th value: the columns above are the rows `{"id": 4, "core": 4, "siblings": [4, 36], "state":
"dedicated", "owner": "nova"}`, `{"id": 5, "core": 5, "siblings": [5, 37]}` and so on. The service
reads the columns straight into its models (`nfvplace/service/host_columns.py`), and validates
them as the rows they stand for; `rows` gives the CHD with its rows written out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

TEMPLATE = "template"
TEMPLATES = "templates"


def expanded(columns: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows that well-formed columns stand for (tuples written as lists, as JSON reads them)."""
    names = [name for name in columns if name not in (TEMPLATE, TEMPLATES)]
    count = len(columns[names[0]]) if names else len(columns.get(TEMPLATE) or ())
    templates: Sequence[Mapping[str, Any]] = columns.get(TEMPLATES) or ({},)
    which: Sequence[int] = columns.get(TEMPLATE) or [0] * count
    return [
        {
            **{name: _plain(columns[name][i]) for name in names},
            **templates[which[i]],
        }
        for i in range(count)
    ]


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def rows(chd: Mapping[str, Any]) -> dict[str, Any]:
    """The CHD with every node's `cpus` and every port's `vfs` as rows (a list of objects)."""
    nodes = []
    for node in chd.get("numa_nodes") or ():
        node = dict(node)
        if isinstance(node.get("cpus"), Mapping):
            node["cpus"] = expanded(node["cpus"])
        if node.get("nics"):
            node["nics"] = [
                {**nic, "ports": [_port_rows(port) for port in nic.get("ports") or ()]}
                for nic in node["nics"]
            ]
        nodes.append(node)
    return {**chd, "numa_nodes": nodes}


def _port_rows(port: Mapping[str, Any]) -> dict[str, Any]:
    vfs = port.get("vfs")
    return {**port, "vfs": expanded(vfs)} if isinstance(vfs, Mapping) else dict(port)
