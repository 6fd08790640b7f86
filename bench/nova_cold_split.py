"""Where a cold `NfvplaceFilter` pass spends its time, step by step, in CPU milliseconds.

    .venv/bin/python bench/nova_cold_split.py [--hosts 1000] [--seed 1]

`bench/nova_scale.py` times the whole pass against Nova's NUMATopologyFilter on a machine shared
with other work, where wall-clock figures move by 2x from one run to the next. This runs the same
steps in one process, without Nova and without HTTP, on the same host views (bench/nova_candidates.py
`host`), and counts each step's CPU time (`time.process_time`, which the machine's load moves
less): the plug-in writing every host's CHD (its PUs and VFs as columns) and digest
(`chds._written`, from host views: reading Nova's HostStates into them adds about 0.2 s per 1,000),
then the service's route on the body the plug-in sends (`POST /v1/evaluations` with every host in
full): reading the JSON, checking the digests, validating the CHDs (each distinct PU or VF row once:
the rows kept are forgotten first, as a new service holds none), building the index and evaluating
(every fitting host decided by the exact model). The index is lazy, as the route builds it: a kind's
columns are filled when the evaluation first reads them, so that part shows under evaluating. The first request, about another host, loads
the solver and the readers (not counted).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.nova_candidates import FLAVORS, host  # noqa: E402
from nfvplace.integrations.nova import chds  # noqa: E402
from nfvplace.integrations.nova.reach import floats_host_wide  # noqa: E402
from nfvplace.integrations.nova.requests import pins_isolated  # noqa: E402
from nfvplace.models.loading import gc_paused  # noqa: E402
from nfvplace.placement import evaluate, index_of  # noqa: E402
from nfvplace.service import host_columns, host_refs  # noqa: E402
from nfvplace.service.routers import evaluations  # noqa: E402


def _cpu[T](times: dict[str, float], step: str, call: Callable[[], T]) -> T:
    start = time.process_time()
    out = call()
    times[step] = times.get(step, 0.0) + (time.process_time() - start) * 1000
    return out


def _document(flavor: dict[str, Any]) -> dict[str, Any]:
    """The Nova request document the plug-in sends for a flavor (`requests.request_document`)."""
    keys = ("name", "vcpus", "ram", "extra_specs")
    return {"flavor": {**{k: flavor[k] for k in keys}, "disk": 0}}


def _raw(document: dict[str, Any], sent: list[chds.SentHost]) -> bytes:
    """The body `client.EvaluationClient` posts, every host in full (before gzip)."""
    head = {"vm": document, "dialect": "openstack-flavor", "policy": "pack"}
    items = [
        b'{"id":%s,"ref":"%s","chd":%s}' % (json.dumps(h.id).encode(), h.ref.encode(), h.text)
        for h in sent
    ]
    body = json.dumps({**head, "configurations": False}, separators=(",", ":")).encode()
    return body[:-1] + b',"hosts":[' + b",".join(items) + b"]}"


def split(views: list[dict[str, Any]], flavor: dict[str, Any]) -> dict[str, float]:
    """CPU ms per step of one cold pass of `flavor` over `views` (the service's answers and held
    hosts forgotten first)."""
    document = _document(flavor)
    wide, isolate = floats_host_wide(document), pins_isolated(document)
    evaluations.ANSWERS.kept.clear()
    host_refs.HOSTS.kept.clear()
    host_refs.HOSTS.modelled.clear()
    host_columns.forget()  # the PUs and VFs read before, as a new service holds none
    times: dict[str, float] = {}
    with chds.gc_paused():  # as the plug-in writes a pass's CHDs
        sent = _cpu(
            times,
            "plug-in: CHDs and digests",
            lambda: [chds._written(v, wide, isolate) for v in views],
        )
    raw = _raw(document, sent)
    with gc_paused():  # as the route reads a body
        _service(times, raw)
    return times


def _service(times: dict[str, float], raw: bytes) -> None:
    body = _cpu(times, "service: read the JSON", lambda: evaluations._body(raw, "application/json"))
    vm_text, dialect, hosts, options = evaluations._envelope(body)
    vm = evaluations._vm(vm_text, dialect)
    _, given = _cpu(times, "service: check digests", lambda: evaluations._request_hosts(hosts))
    models = _cpu(
        times,
        "service: validate CHDs",
        lambda: [evaluations._held(i, h) for i, h in enumerate(given)],
    )
    fleet = _cpu(times, "service: index", lambda: index_of(models, share=False, lazy=True))
    answers = _cpu(
        times,
        "service: evaluate",
        lambda: evaluate(fleet, vm, policy=options.policy, configurations=False),
    )
    times["hosts fitting"] = sum(a.fits for a in answers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    views = [host(rng, f"compute-{k:04d}") for k in range(args.hosts)]
    split([host(random.Random(-1), "warm-up")], FLAVORS[0])  # loads the solver and the readers
    rows = {flavor["name"]: split(views, flavor) for flavor in FLAVORS}
    steps = [step for step in next(iter(rows.values())) if step != "hosts fitting"]
    print(f"{args.hosts} hosts, CPU ms per step of a cold pass")
    print(f"{'step':<28}" + "".join(f"{name:>11}" for name in rows))
    for step in [*steps, "hosts fitting"]:
        print(f"{step:<28}" + "".join(f"{row[step]:11,.0f}" for row in rows.values()))
    print(
        f"{'total':<28}" + "".join(f"{sum(row[s] for s in steps):11,.0f}" for row in rows.values())
    )


if __name__ == "__main__":
    main()
