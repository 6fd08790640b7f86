"""What a worker pays to read the hosts another worker placed on: whole, or by the commits since.

    .venv/bin/python -m bench.service_reads [--hosts 1000] [--blocks 8] [--every 50]

One worker places the mix of `bench_service_mix.py` (hostgen hosts, its request stream, in its
order) on a real SQLite store, a block of `--every` placements at a time, and writes back after
every `--write-back` blocks (as its upkeep does every `retention.WRITE_BACK_S`, 2 s, where another
worker reads a host at the latest `live.STALE_S`, 1 s, after it changed). After each block two
other workers read the hosts it placed on: one
whole (each host's stored document parsed, the commits since it claimed: `committed_since` made to
give nothing), the other by claiming on its index's copy the commits since (`committed_since`);
they take turns at going first. CPU time per host read, and whether the two indexes hold the same
hosts at the end (they must).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import tempfile
import time
from typing import Any

from .bench_service_mix import bodies
from .hostgen import iter_fleet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--write-back", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from nfvplace import placement
    from nfvplace.service.metrics import Metrics
    from nfvplace.service.placing import Placements
    from nfvplace.service.problems import ProblemError
    from nfvplace.service.routers import placements as route
    from nfvplace.store import Store

    url = f"sqlite:///{tempfile.mkdtemp(prefix='service-reads-')}/nfvplace.db"
    store = Store.open(url)
    for chd in iter_fleet(args.hosts, args.seed):
        store.put_host(chd)
    placer = Placements(store, placement.place, Metrics(), 5)
    readers = {
        mode: Placements(Store.open(url, migrate=False), placement.place, Metrics(), 5)
        for mode in ("whole", "claims")
    }
    readers["whole"].store.committed_since = lambda _known: {}  # type: ignore[method-assign]
    for worker in (placer, *readers.values()):
        worker.live.refresh()
    gc.collect()
    gc.freeze()
    stream = iter(bodies(args.seed + 1))
    spent = {mode: [0.0, 0] for mode in readers}
    for block in range(args.blocks):
        for _ in range(args.every):
            body = route.parse_body(next(stream).encode(), "application/json")
            with contextlib.suppress(ProblemError):  # no host fits: a 409, as the service answers
                placer.place(route.placement_request(body), None)
        if block % args.write_back == args.write_back - 1:
            placer.live.write_back()
        for mode in sorted(readers, reverse=block % 2 == 1):
            seconds, count = read_stale(readers[mode].live)
            spent[mode][0] += seconds
            spent[mode][1] += count
    for mode, (seconds, count) in spent.items():
        print(f"{mode:6}: {count} host reads, {1000 * seconds / max(count, 1):.3f} ms of CPU each")
    whole, claims = (readers[mode].live._fleet() for mode in ("whole", "claims"))
    same = sorted(whole.ids) == sorted(claims.ids) and all(
        whole.host(h) == claims.host(h) for h in whole.ids
    )
    print(f"the two readers' indexes hold the same hosts: {same}")


def read_stale(live: Any) -> tuple[float, int]:
    """The change feed applied, then every stale host read: the read's CPU seconds, and how many."""
    with live._lock:
        live._read(*live._feed())
        stale = live._marks.stale()
        started = time.process_time()
        live._read_again(live._fleet(), stale)
        return time.process_time() - started, len(stale)


if __name__ == "__main__":
    main()
