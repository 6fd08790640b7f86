"""Lint cost against a baseline measured in the same run: parsing and validating the same text.

Prints, for a large host (8 NUMA nodes x 64 PUs, SR-IOV ports with 64 VFs each) and for the bundled
examples, the time of `lint_text` and its ratio to `parse_text` + model validation of the same
document. Target: lint costs at most 3x what loading costs (the semantic rules are linear).

    .venv/bin/python bench/lint_bench.py
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from nfvplace import load
from nfvplace.lint import lint_text
from nfvplace.models.loading import iter_descriptor_files, parse_document, parse_text

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 3.0


def big_host(nodes: int = 8, cores: int = 32) -> str:
    numa: list[dict[str, Any]] = []
    total_pus = nodes * cores * 2
    for n in range(nodes):
        cpus = []
        for c in range(cores):
            core = n * cores + c
            pair = [core, core + total_pus // 2]
            for pu in pair:
                cpus.append({"id": pu, "core": core, "siblings": pair, "state": "free"})
        vfs = [{"pci_address": f"0000:{n + 16:02x}:{2 + v // 8:02x}.{v % 8}"} for v in range(64)]
        numa.append(
            {
                "id": n,
                "cpus": cpus,
                "memory": {
                    "total_mib": 262144,
                    "hugepages": [{"size_kib": 1048576, "total": 128, "used": 4}],
                },
                "nics": [
                    {
                        "vendor": "Intel",
                        "model": "E810",
                        "ports": [
                            {
                                "pci_address": f"0000:{n + 16:02x}:00.0",
                                "speed_gbps": 100,
                                "usage": "sriov",
                                "vfs": vfs,
                            }
                        ],
                    }
                ],
            }
        )
    doc = {
        "schema": "nfvplace/chd/v1",
        "id": "big",
        "processor": {"vendor": "GenuineIntel", "model": "Xeon"},
        "numa_nodes": numa,
    }
    return yaml.safe_dump(doc, sort_keys=False)


def best(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    text = big_host()
    baseline = best(lambda: parse_document(parse_text(text)))
    linted = best(lambda: lint_text(text, "big.yaml"))
    ratio = linted / baseline
    print(
        f"big host ({len(text) // 1024} KiB): load {baseline * 1e3:.1f} ms, lint {linted * 1e3:.1f} ms, ratio {ratio:.2f}"
    )
    files = list(iter_descriptor_files(ROOT / "examples"))
    texts = [(str(p), p.read_text()) for p in files]
    base_ex = best(lambda: [load(p) for p in files])  # every format, as lint reads them
    lint_ex = best(lambda: [lint_text(t, name) for name, t in texts])
    ratio_ex = lint_ex / base_ex
    print(
        f"examples ({len(files)} files): load {base_ex * 1e3:.1f} ms, lint {lint_ex * 1e3:.1f} ms, ratio {ratio_ex:.2f}"
    )
    worst = max(ratio, ratio_ex)
    print(
        f"worst ratio {worst:.2f} (target <= {TARGET_RATIO})",
        "OK" if worst <= TARGET_RATIO else "OVER",
    )
    return 0 if worst <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
