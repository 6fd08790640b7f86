"""`/ui`: the read-only web view (fleet heatmap, host pictures with their placements, the placements
list, a dry-run form). Server-side rendered from `nfvplace.visual`; no JavaScript.

Browsers cannot send a bearer header, so `/ui/signin` takes a token once and keeps it in a Secure,
HttpOnly, SameSite=Strict cookie scoped to `/ui`; a bearer header works too (tools, tests). Every page
needs the reader role; nothing here changes the store.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ...errors import NfvplaceError
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.loading import parse_text
from ...models.vmd import VmDescriptor
from ...models.vnf import VnfTemplate
from ...reader import load_document
from ...store import Store
from ...visual import heatmap_svg, host_svg, hosts_svg
from ...visual.html import diagnosis_html
from ...visual.overlay import ranges
from ..auth import GRANTS, TokenTable
from ..ui import pages

router = APIRouter(prefix="/ui", include_in_schema=False)

COOKIE = "nfvplace_ui"
COOKIE_AGE_S = 8 * 3600
FORM_LIMIT = 1 << 20
PLACEMENTS_SHOWN = 500


def _role(request: Request) -> str | None:
    """The caller's role from the bearer header or the sign-in cookie (None: not signed in)."""
    table: TokenTable = request.app.state.tokens
    if table.open:
        return "admin"
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        token = request.cookies.get(COOKIE, "")
    role = table.role_of(token.strip()) if token else None
    return role if role is not None and "reader" in GRANTS[role] else None


def _signed_in(request: Request) -> bool:
    return _role(request) is not None


def _to_signin() -> RedirectResponse:
    return RedirectResponse("/ui/signin", status_code=303)


def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    fields = parse_qs(body[:FORM_LIMIT].decode("utf-8", "replace"), keep_blank_values=True)
    return {key: values[0] for key, values in fields.items()}


def _configs(store: Store, host: str | None = None) -> list[tuple[str, VmConfiguration]]:
    out = []
    for record in store.list_placements(host=host, limit=PLACEMENTS_SHOWN).placements:
        for data in record.configurations:
            config = VmConfiguration.model_validate(data)
            if host is None or config.host == host:
                out.append((record.id, config))
    return out


def _row(placement_id: str, config: VmConfiguration) -> dict[str, Any]:
    return {
        "id": placement_id,
        "vm": config.vm,
        "owner": config.owner,
        "host": config.host,
        "cpus": ranges(config.pinned_cpus) or (ranges(config.shared.cpus) if config.shared else ""),
    }


def _fleet_page(store: Store) -> str:
    snapshot = store.snapshot()
    hosts = list(snapshot.hosts.values())
    counts = Counter(config.host for _id, config in _configs(store))
    rows = [
        {
            "id": h.id,
            "generation": snapshot.generations.get(h.id, ""),
            "nodes": len(h.numa_nodes),
            "pus": len(h.cpus),
            "placements": counts[h.id],
        }
        for h in hosts
    ]
    heatmap = heatmap_svg(hosts, title="fleet") if hosts else ""
    return pages.fleet(heatmap, rows)


def _host_page(store: Store, host_id: str) -> str | None:
    host = store.snapshot().hosts.get(host_id)
    if host is None:
        return None
    configs = _configs(store, host_id)
    picture = host_svg(host, [c for _id, c in configs])
    return pages.host(host_id, picture, [_row(i, c) for i, c in configs])


def _dry_run(request: Request, text: str, policy: str) -> str:
    try:
        descriptor = load_document(parse_text(text, "descriptor"))
    except NfvplaceError as error:
        return pages.dry_run(text, policy, error=f"[{error.code}] {error}")
    if not isinstance(descriptor, VmDescriptor | VnfTemplate):
        kind = type(descriptor).__name__
        return pages.dry_run(
            text, policy, error=f"expected a VM Descriptor or VNF template, got a {kind}"
        )
    hosts: dict[str, ComputeHostDescriptor] = dict(_store(request).snapshot().hosts)
    try:
        result = request.app.state.placer(
            list(hosts.values()), descriptor, policy=policy, explain=True
        )
    except NfvplaceError as error:
        return pages.dry_run(text, policy, error=f"[{error.code}] {error}")
    if not result.ok:
        diagnosis = result.diagnosis
        outcome = pages.dry_run_outcome(
            diagnosis.summary if diagnosis else "no host fits",
            None,
            diagnosis_html(diagnosis) if diagnosis else "",
        )
        return pages.dry_run(text, policy, outcome=outcome)
    configs = result.configurations
    used = [result.hosts.get(h, hosts[h]) for h in dict.fromkeys(c.host for c in configs)]
    rows = [
        {
            "vm": c.vm,
            "host": c.host,
            "cpus": ranges(c.pinned_cpus),
            "interfaces": ", ".join(f"{i.name}={i.pci_address or i.mode}" for i in c.interfaces),
        }
        for c in configs
    ]
    summary = f"fits: {len(configs)} VM(s) on {', '.join(h.id for h in used)} (nothing claimed)"
    picture = hosts_svg(used, configs, title="dry run")
    details = pages.configurations_table(rows)
    if result.explanation:
        items = "".join(f"<li>{escape(line)}</li>" for line in result.explanation)
        details += f'<ul id="explanation">{items}</ul>'
    return pages.dry_run(text, policy, outcome=pages.dry_run_outcome(summary, picture, details))


@router.get("/signin", response_class=HTMLResponse)
def signin_form(request: Request) -> Response:
    if _signed_in(request):
        return RedirectResponse("/ui", status_code=303)
    return HTMLResponse(pages.signin())


@router.post("/signin", response_class=HTMLResponse)
async def signin(request: Request) -> Response:
    token = (await _form(request)).get("token", "").strip()
    table: TokenTable = request.app.state.tokens
    role = table.role_of(token) if token else None
    if role is None or "reader" not in GRANTS[role]:
        return HTMLResponse(
            pages.signin("unknown token: give a token of the service"), status_code=401
        )
    response = RedirectResponse("/ui", status_code=303)
    response.set_cookie(
        COOKIE,
        token,
        max_age=COOKIE_AGE_S,
        path="/ui",
        secure=True,
        httponly=True,
        samesite="strict",
    )
    return response


@router.post("/signout")
def signout() -> Response:
    response = _to_signin()
    response.delete_cookie(COOKIE, path="/ui", secure=True, httponly=True, samesite="strict")
    return response


@router.get("", response_class=HTMLResponse)
def fleet(request: Request) -> Response:
    if not _signed_in(request):
        return _to_signin()
    return HTMLResponse(_fleet_page(_store(request)))


@router.get("/placements", response_class=HTMLResponse)
def placement_list(request: Request) -> Response:
    if not _signed_in(request):
        return _to_signin()
    rows = [_row(i, c) for i, c in _configs(_store(request))]
    return HTMLResponse(pages.placements(rows))


@router.get("/hosts/{host_id:path}", response_class=HTMLResponse)
def host(request: Request, host_id: str) -> Response:
    if not _signed_in(request):
        return _to_signin()
    html = _host_page(_store(request), host_id)
    if html is None:
        return HTMLResponse(pages.not_found(f"no host {host_id!r}"), status_code=404)
    return HTMLResponse(html)


@router.get("/dry-run", response_class=HTMLResponse)
def dry_run_form(request: Request) -> Response:
    if not _signed_in(request):
        return _to_signin()
    return HTMLResponse(pages.dry_run())


@router.post("/dry-run", response_class=HTMLResponse)
async def dry_run(request: Request) -> Response:
    if not _signed_in(request):
        return _to_signin()
    form = await _form(request)
    policy = form.get("policy", "pack")
    policy = policy if policy in pages.POLICIES else "pack"
    html = await run_in_threadpool(_dry_run, request, form.get("descriptor", ""), policy)
    return HTMLResponse(html)
