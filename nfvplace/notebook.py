"""Lends core objects what they show in notebooks, and a host's topology graph (see `hooks`).

Imported on the first `_repr_svg_`, `_repr_html_` or `to_networkx` call (`nfvplace/__init__` names
it), or explicitly. Models, lint and placement import nothing above them; this module, above both
them and `nfvplace.visual`, ties them together.
"""

from __future__ import annotations

from . import hooks
from .topology_graph import chd_graph
from .visual.host import host_svg, hosts_svg
from .visual.html import diagnosis_html, findings_html

hooks.lend(hooks.HOST_SVG, host_svg)
hooks.lend(hooks.HOSTS_SVG, hosts_svg)
hooks.lend(hooks.DIAGNOSIS_HTML, diagnosis_html)
hooks.lend(hooks.FINDINGS_HTML, findings_html)
hooks.lend(hooks.HOST_GRAPH, chd_graph)
