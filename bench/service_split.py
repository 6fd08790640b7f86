"""Where a placement's CPU goes in the service, stage by stage, without HTTP, in one process.

    .venv/bin/python -m bench.service_split [--hosts 1000] [--requests 600] [--compare TREE]

The realistic mix of `bench_service_mix.py` (hostgen hosts, its request stream, in its order),
sent one at a time through the service's own functions on a real SQLite store: the body read
(`parsed_request`: JSON, the envelope, the gate), the placement (`Placements.place` as the event
loop calls it, with its phases: refresh, engine, index, commit), a refusal's problem document
(the diagnosis), and the answer's JSON response rendered, with the worker's write-back every
`retention.WRITE_BACK_S` of placements at `--rate` per second as the worker's upkeep does (and
SQLite's log checkpointed there, where the tree's upkeep does it). The engine places the same requests
on a prebuilt `FleetIndex` first (`place`, then the index updated), and every figure is CPU time
per request (`process_time`), so that the machine's other users do not skew it. What the server
spends beyond these (uvicorn, Starlette, the middleware) is the HTTP benchmark's total minus them.

With `--compare`, the same is run on another tree in a child process first (both trees' children
take turns, `--rounds` times), and the medians are printed side by side.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def child(hosts_count: int, requests: int, seed: int, rate: float) -> dict[str, float]:
    """This process's figures, in ms of CPU per request (the tree is whatever `nfvplace` is)."""
    from nfvplace.models.chd import ComputeHostDescriptor
    from nfvplace.models.vmd import VmDescriptor
    from nfvplace.placement import FleetIndex, place
    from nfvplace.service import retention
    from nfvplace.service.metrics import Metrics
    from nfvplace.service.placing import Placements
    from nfvplace.service.problems import ProblemError
    from nfvplace.service.routers import placements as route
    from nfvplace.service.workers import keep_out_of_collections
    from nfvplace.store import Store

    from .bench_service_mix import bodies
    from .hostgen import iter_fleet

    hosts = list(iter_fleet(hosts_count, seed))
    stream = [body.encode() for body in bodies(seed + 1)][:requests]
    out: Counter[str] = Counter()

    fleet = FleetIndex([ComputeHostDescriptor.model_validate(h.model_dump()) for h in hosts])
    vms = [VmDescriptor.model_validate(json.loads(body)["vm"]) for body in stream]
    for k, vm in enumerate(vms):
        started = time.process_time()
        result = place(fleet, vm, instance=f"bench-{k}")
        placed_at = time.process_time()
        if result.ok:
            fleet.update_many(result.hosts.values())
        out["engine"] += placed_at - started
        out["engine's index update"] += time.process_time() - placed_at

    folder = tempfile.mkdtemp(prefix="service-split-")
    store = Store.open(f"sqlite:///{folder}/nfvplace.db")
    for chd in hosts:
        store.put_host(chd)
    metrics = Metrics()
    phases: Counter[str] = Counter()
    metrics.charge = lambda phase, seconds: phases.update({phase: seconds})  # type: ignore[method-assign]
    from nfvplace import placement

    placements = Placements(store, placement.place, metrics, max_attempts=5)
    write_back_every = max(1, round(retention.WRITE_BACK_S * rate))
    loop = getattr(retention, "upkeep_forever", None)  # trees before issue 39: write_back_forever
    checkpoints = loop is not None and "live.store.checkpoint()" in inspect.getsource(loop)

    def upkeep() -> None:
        """A round of the worker's upkeep loop (without its catch-up)."""
        placements.live.write_back()
        if checkpoints:
            store.checkpoint()

    placements.live.refresh()
    keep_out_of_collections()  # as `serve`'s workers do once the index is built
    gc.callbacks.append(collections)
    phases.clear()
    statuses: Counter[int] = Counter()
    for k, raw in enumerate(stream):
        t0 = time.process_time()
        parsed = route.parsed_request(raw, "application/json")  # as the route reads a body
        t1 = time.process_time()
        try:
            answer = placements.place(parsed, uuid.uuid4().hex, inline=True)
            t2 = time.process_time()
            response = route.FastJSONResponse(answer.body, answer.status, answer.headers)
            statuses[answer.status] += 1
        except ProblemError as exc:
            t2 = time.process_time()
            response = problem_response(exc)
            statuses[exc.status] += 1
        t3 = time.process_time()
        del response
        out["body read (parse, envelope, gate)"] += t1 - t0
        out["place (decide, commit, finish)"] += t2 - t1
        out["answer or problem rendered"] += t3 - t2
        if k % write_back_every == write_back_every - 1:
            t4 = time.process_time()
            upkeep()
            out["write-back (and checkpoint)"] += time.process_time() - t4
    t5 = time.process_time()
    upkeep()
    out["write-back (and checkpoint)"] += time.process_time() - t5
    gc.callbacks.remove(collections)
    out["(of which the garbage collector)"] = COLLECTING["s"]
    placements.close()
    store.close()
    per = 1000 / len(stream)
    figures = {k: v * per for k, v in out.items()}
    figures |= {f"  phase {k}": v * per for k, v in sorted(phases.items())}
    place_ms = figures["place (decide, commit, finish)"]
    figures["  place beyond its phases"] = place_ms - sum(v * per for v in phases.values())
    figures |= {f"answers {k}": float(v) for k, v in sorted(statuses.items())}
    return figures


COLLECTING = {"s": 0.0, "at": 0.0}


def collections(phase: str, info: dict[str, int]) -> None:
    """`gc.callbacks`: the CPU time of the garbage collector's collections, added up."""
    if phase == "start":
        COLLECTING["at"] = time.process_time()
    else:
        COLLECTING["s"] += time.process_time() - COLLECTING["at"]


def problem_response(exc: Any) -> Any:
    """The problem document the app's handler answers a ProblemError with."""
    from nfvplace.service.problems import problem_response as response

    return response(None, exc.status, exc.code, exc.detail, exc.headers, **exc.extra)


TOKEN = "bench-admin-token-0123456789"


def through_app(hosts_count: int, requests: int, seed: int) -> dict[str, float]:
    """The same stream through the whole ASGI app (`create_app`: the middleware, FastAPI's router,
    the route, the JSON log line and the metrics, the write-back task), as uvicorn calls it but
    without uvicorn's HTTP parsing and sockets: its CPU ms per request."""
    import asyncio
    import logging
    import os

    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="split-metrics-"))
    from nfvplace.service import logs
    from nfvplace.service.app import create_app
    from nfvplace.service.settings import Settings
    from nfvplace.service.workers import keep_out_of_collections
    from nfvplace.store import Store

    from .bench_service_mix import bodies
    from .hostgen import iter_fleet

    stream = [body.encode() for body in bodies(seed + 1)][:requests]
    db = f"sqlite:///{tempfile.mkdtemp(prefix='service-split-')}/nfvplace.db"
    store = Store.open(db)
    for chd in iter_fleet(hosts_count, seed):
        store.put_host(chd)
    store.close()
    logs.configure()
    for handler in logging.getLogger("nfvplace").handlers:
        handler.setStream(open(os.devnull, "w"))  # noqa: SIM115 (the process's whole life)
    app = create_app(
        Settings(db_url=db, tokens={"admin": [TOKEN]}),
        on_index_built=keep_out_of_collections,  # as `serve`'s workers
    )
    statuses: Counter[int] = Counter()

    async def call(raw: bytes) -> None:
        headers = [
            (b"host", b"127.0.0.1:8080"),
            (b"content-type", b"application/json"),
            (b"authorization", f"Bearer {TOKEN}".encode()),
            (b"idempotency-key", uuid.uuid4().hex.encode()),
            (b"content-length", str(len(raw)).encode()),
        ]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/v1/placements",
            "raw_path": b"/v1/placements",
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 40000),
            "server": ("127.0.0.1", 8080),
            "state": {},
        }
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.sleep(3600)
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses[message["status"]] += 1

        await app(scope, receive, send)

    inside: Counter[str] = Counter()
    from nfvplace.service.routers import placements as route

    reading = route.parsed_request

    # the event loop's own CPU (the upkeep's write-back runs on a thread of its own meanwhile)
    def parsed_request(raw: bytes, media: str) -> Any:
        started = time.thread_time()
        try:
            return reading(raw, media)
        finally:
            inside["app: body read"] += time.thread_time() - started

    route.parsed_request = parsed_request  # type: ignore[assignment]

    async def run() -> float:
        async with app.router.lifespan_context(app):
            placing = app.state.placements.place_async

            async def place_async(request: Any, key: str | None) -> Any:
                started = time.thread_time()
                try:
                    return await placing(request, key)
                finally:
                    inside["app: place"] += time.thread_time() - started

            app.state.placements.place_async = place_async
            await call(stream[0].replace(b'{"vm"', b'{"dry_run": true, "vm"'))  # the index
            statuses.clear()
            inside.clear()
            started = time.process_time()
            for raw in stream:
                await call(raw)
                await asyncio.sleep(0)  # the write-back task's turn, as between requests
            return time.process_time() - started

    spent = asyncio.run(run())
    per = 1000 / len(stream)
    out = {"app (the whole ASGI app)": spent * per}
    out |= {k: v * per for k, v in inside.items()}
    out["app: the rest (middleware, router, answer, log, metrics, write-back)"] = (
        spent - sum(inside.values())
    ) * per
    return out | {f"app answers {k}": float(v) for k, v in sorted(statuses.items())}


def run_child(tree: Path, args: argparse.Namespace) -> dict[str, float]:
    code = (
        f"import sys; sys.path.insert(0, {str(tree)!r}); import nfvplace; "
        f"sys.path.insert(0, {str(ROOT)!r}); import json; from bench.service_split import child, through_app; "
        f"print(json.dumps(child({args.hosts}, {args.requests}, {args.seed}, "
        f"{args.rate}) | through_app({args.hosts}, {args.requests}, {args.seed})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tree, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr[-3000:]}")
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--rate", type=float, default=80, help="placements per second the upkeep is timed by"
    )
    parser.add_argument("--compare", type=Path, help="another source tree, measured first")
    args = parser.parse_args()
    trees = [args.compare.resolve(), ROOT] if args.compare else [ROOT]
    runs: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    for _ in range(args.rounds):
        for tree in trees:
            runs[tree].append(run_child(tree, args))
    medians = {
        tree: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for tree, rs in runs.items()
    }
    keys = list(medians[ROOT])
    print(
        f"CPU ms per request, median of {args.rounds} ({args.requests} requests, {args.hosts} hosts)"
    )
    print(f"{'':42}" + "".join(f"{tree.name:>16}" for tree in trees))
    for key in keys:
        cells = "".join(f"{medians[tree].get(key, 0.0):16.3f}" for tree in trees)
        print(f"{key:42}{cells}")
    for tree in trees:
        m = medians[tree]
        stages = ("body read", "place (", "answer or", "write-back")
        service = sum(v for k, v in m.items() if k.startswith(stages))
        app = m["app (the whole ASGI app)"]
        print(
            f"{tree.name}: the stages {service:.2f} ms, x{service / m['engine']:.2f} the "
            f"engine's {m['engine']:.2f} ms; the app {app:.2f} ms, x{app / m['engine']:.2f} "
            f"(the middleware, router, log and metrics about {app - service:.2f} ms)"
        )


if __name__ == "__main__":
    main()
