"""How many claims the service's write-back builds a host from (issue 38).

    .venv/bin/python -m bench.write_back_chains [--hosts 1000] [--requests 3000] [--every 500]

The realistic mix of `bench_service_mix.py`, placed one request at a time through the service's
own `Placements` on a real SQLite store, with the worker's write-back every `--every` placements
(`retention.WRITE_BACK_S` at about 250 placements a second). Each host the write-back stores is
built from the claims kept pending on it (`index/pending.py` `built`); this counts the builds and
the claims each replays, and the CPU time the write-back takes a request. Counts do not depend on
the machine's load; the times do. Run it with each tree's interpreter to compare trees.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
import uuid

from nfvplace import placement
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.placement.index import pending
from nfvplace.service.metrics import Metrics
from nfvplace.service.placing import Placements
from nfvplace.service.problems import ProblemError
from nfvplace.service.routers import placements as route
from nfvplace.store import Store

from .bench_service_mix import bodies
from .hostgen import iter_fleet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--every", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    store = Store.open(f"sqlite:///{tempfile.mkdtemp(prefix='write-back-')}/nfvplace.db")
    for chd in iter_fleet(args.hosts, args.seed):
        store.put_host(chd)
    placements = Placements(store, placement.place, Metrics(), max_attempts=5)
    placements.live.refresh()
    chains: list[int] = []
    built = pending.built

    def counted(
        base: ComputeHostDescriptor, configs: tuple[VmConfiguration, ...]
    ) -> ComputeHostDescriptor:
        chains.append(len(configs))
        return built(base, configs)

    pending.built = counted  # type: ignore[assignment]
    writing = 0.0
    stream = [body.encode() for body in bodies(args.seed + 1)][: args.requests]
    for k, raw in enumerate(stream):
        parsed = route.placement_request(route.parse_body(raw, "application/json"))
        with contextlib.suppress(ProblemError):  # a refusal: nothing owed
            placements.place(parsed, uuid.uuid4().hex, inline=True)
        if k % args.every == args.every - 1:
            started = time.process_time()
            placements.live.write_back()
            writing += time.process_time() - started
    placements.close()
    store.close()
    print(f"{len(stream)} requests, {args.hosts} hosts, a write-back every {args.every}")
    print(f"  hosts built by the write-back          {len(chains)}")
    print(f"  claims replayed a host built, mean     {statistics.mean(chains or [0]):.2f}")
    print(f"  ... the most                           {max(chains or [0])}")
    print(f"  write-back, CPU ms a request           {writing * 1000 / len(stream):.3f}")


if __name__ == "__main__":
    main()
