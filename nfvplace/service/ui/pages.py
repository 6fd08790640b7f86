"""HTML pages of the web view: pure functions from data to text, every value escaped.

Plain string templates (no template engine, no JavaScript): a page is a header with the navigation,
a title and a body made of the pictures (inline SVG from `nfvplace.visual`) and tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from ...visual.html import table

POLICIES = ("pack", "spread", "least-fragmentation")

CSS = """
body{font-family:DejaVu Sans,Verdana,sans-serif;margin:0;color:#222}
header{background:#2d3e50;color:#fff;padding:8px 16px;display:flex;gap:18px;align-items:center}
header a{color:#fff;text-decoration:none}header form{margin-left:auto}
main{padding:12px 16px}h1{font-size:20px}.picture{overflow:auto;border:1px solid #ddd}
.error{background:#fde2e1;border:1px solid #e8836f;padding:8px;white-space:pre-wrap}
textarea{width:100%;font-family:monospace}table{margin:8px 0;border-collapse:collapse}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}
"""


def page(title: str, body: str, *, signed_in: bool = True) -> str:
    nav = ""
    if signed_in:
        nav = (
            '<a href="/ui">Fleet</a><a href="/ui/placements">Placements</a>'
            '<a href="/ui/dry-run">Dry run</a>'
            '<form method="post" action="/ui/signout"><button type="submit">Sign out</button></form>'
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)} - nfvplace</title><style>{CSS}</style></head>"
        f'<body><header><strong>nfvplace</strong>{nav}</header><main><h1 id="title">'
        f"{escape(title)}</h1>{body}</main></body></html>"
    )


def signin(message: str | None = None) -> str:
    error = f'<p class="error" id="error">{escape(message)}</p>' if message else ""
    form = (
        '<form method="post" action="/ui/signin" id="signin">'
        '<label>Token <input type="password" name="token" id="token" autocomplete="off" required>'
        '</label> <button type="submit" id="submit">Sign in</button></form>'
        "<p>Any token of the service with the reader role (or above). The browser keeps it in a "
        "secure, HTTP-only cookie for this view; tools keep sending <code>Authorization: Bearer</code>.</p>"
    )
    return page("Sign in", error + form, signed_in=False)


def host_link(host_id: str) -> str:
    return f'<a href="/ui/hosts/{quote(host_id, safe="")}">{escape(host_id)}</a>'


def fleet(heatmap: str, hosts: Sequence[Mapping[str, Any]]) -> str:
    if not hosts:
        return page(
            "Fleet", '<p id="empty">No host yet: host agents PUT their CHDs to /v1/hosts.</p>'
        )
    rows = "".join(
        f"<tr><td>{host_link(h['id'])}</td><td>{h['generation']}</td><td>{h['nodes']}</td>"
        f"<td>{h['pus']}</td><td>{h['placements']}</td></tr>"
        for h in hosts
    )
    listing = (
        '<table id="hosts"><thead><tr><th>host</th><th>generation</th><th>NUMA nodes</th><th>PUs</th>'
        f"<th>placements</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    return page("Fleet", f'<div class="picture" id="heatmap">{heatmap}</div>{listing}')


def placements_table(placements: Sequence[Mapping[str, Any]]) -> str:
    if not placements:
        return '<p id="no-placements">No live placement.</p>'
    rows = "".join(
        f"<tr><td>{escape(p['id'])}</td><td>{escape(p['vm'])}</td><td>{escape(p['owner'])}</td>"
        f"<td>{host_link(p['host'])}</td><td>{escape(p['cpus'])}</td></tr>"
        for p in placements
    )
    return (
        '<table id="placements"><thead><tr><th>placement</th><th>VM</th><th>owner</th><th>host</th>'
        f"<th>PUs</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def placements(rows: Sequence[Mapping[str, Any]]) -> str:
    return page("Placements", placements_table(rows))


def host(host_id: str, picture: str, rows: Sequence[Mapping[str, Any]]) -> str:
    body = f'<div class="picture" id="picture">{picture}</div><h2>Placements</h2>{placements_table(rows)}'
    return page(f"Host {host_id}", body)


def not_found(what: str) -> str:
    return page("Not found", f'<p class="error" id="error">{escape(what)}</p>')


def dry_run(
    text: str = "",
    policy: str = "pack",
    *,
    error: str | None = None,
    outcome: str = "",
) -> str:
    options = "".join(
        f'<option value="{p}"{" selected" if p == policy else ""}>{p}</option>' for p in POLICIES
    )
    form = (
        '<form method="post" action="/ui/dry-run" id="dry-run">'
        "<p>A VM Descriptor or VNF template (YAML or JSON; nfvplace's format or a vendor dialect). Nothing is claimed.</p>"
        f'<textarea name="descriptor" id="descriptor" rows="16">{escape(text)}</textarea>'
        f'<p><label>Policy <select name="policy" id="policy">{options}</select></label> '
        '<button type="submit" id="place">Dry run</button></p></form>'
    )
    shown = f'<div class="error" id="error">{escape(error)}</div>' if error else ""
    return page("Dry run", form + shown + outcome)


def dry_run_outcome(summary: str, picture: str | None, details: str) -> str:
    head = f'<p id="outcome">{escape(summary)}</p>'
    drawn = f'<div class="picture" id="picture">{picture}</div>' if picture else ""
    return head + details + drawn


def configurations_table(configs: Sequence[Mapping[str, Any]]) -> str:
    rows = [(c["vm"], c["host"], c["cpus"], c["interfaces"]) for c in configs]
    return table(
        "VM Configurations", ("VM", "host", "PUs", "interfaces"), rows, id="configurations"
    )
