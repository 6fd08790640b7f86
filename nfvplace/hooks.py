"""Functions that layers above lend to core objects, so that core objects import nothing above them.

In a notebook a host draws itself (`_repr_svg_`), a placement result draws the hosts it used, a
diagnosis and a lint report show as tables (`_repr_html_`), and a host gives its topology as a graph
(`to_networkx`). The code for these lives above the models, in `nfvplace.visual` and
`nfvplace.topology_graph`. The core object asks for it by name here (`lent(HOST_SVG)(host)`);
`nfvplace.notebook` lends each function (`lend`) when it is imported; and `nfvplace/__init__`, which
Python always runs before any of its modules, names the module to import on the first request
(`provide_with`). This module imports nothing of nfvplace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

HOST_SVG: Final = "host_svg"
"""`(host) -> str`: a CHD drawn as lstopo would (`visual.host_svg`)."""
HOSTS_SVG: Final = "hosts_svg"
"""`(hosts, configurations, title=...) -> str`: several hosts with VMs placed (`visual.hosts_svg`)."""
DIAGNOSIS_HTML: Final = "diagnosis_html"
"""`(diagnosis) -> str`: why nothing fits, one row per host (`visual.html.diagnosis_html`)."""
FINDINGS_HTML: Final = "findings_html"
"""`(findings, caption) -> str`: lint findings as a table (`visual.html.findings_html`)."""
HOST_GRAPH: Final = "host_graph"
"""`(host) -> networkx.Graph`: a CHD's topology (`topology_graph.chd_graph`)."""

_LENT: dict[str, Callable[..., Any]] = {}
_providers: list[Callable[[], None]] = []


def lend(name: str, function: Callable[..., Any]) -> None:
    """Lend `function` to the core objects that ask for `name`."""
    _LENT[name] = function


def provide_with(provider: Callable[[], None]) -> None:
    """Call `provider` (it imports the module that lends) the first time a name is not lent yet."""
    _providers.append(provider)


def lent(name: str) -> Callable[..., Any]:
    """The function lent under `name`, asking the providers for it the first time."""
    if name not in _LENT:
        for provider in _providers:
            provider()
    try:
        return _LENT[name]
    except KeyError:
        raise LookupError(f"nothing lends {name!r}: import nfvplace.notebook first") from None
