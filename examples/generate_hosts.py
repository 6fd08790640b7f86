"""Regenerate examples/hosts/ and examples/fleet/ from the hwloc XML corpus.

    .venv/bin/python examples/generate_hosts.py [--corpus tests/data/hwloc-xml]

Each example is `nfvplace.discovery.chd_from_hwloc_xml` of a real machine's export, passed through
`nfvplace.synthetic.realistic_host` (the documented "realistic use" transform, deterministic per host id
and seed). Running it again gives the same files; tests/test_fleet.py checks that they are in sync.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nfvplace.discovery import chd_from_hwloc_xml
from nfvplace.models import dump
from nfvplace.synthetic import realistic_host

HERE = Path(__file__).resolve().parent

# file name in examples/hosts -> (corpus file, seed)
HOSTS: dict[str, tuple[str, int]] = {
    "supermicro-x9drg-2s-e5-2650": ("32em64t-2n8c2t-pci-normalio.xml", 1),
    "supermicro-4029gp-2s-silver-4108": ("linux-32intel64-2p8co2t+8ve.xml", 2),
    "hp-sl390s-2s-westmere": ("24em64t-2n6c2t-pci.xml", 3),
    "dell-r740-2s-gold-6230-snc2": ("memorysidecaches.xml", 4),
    "cisco-ucs-2s-manyvfs": ("16intel64-manyVFs.xml", 5),
}

# the fleet: compute-NN from a mix of machines
FLEET: list[str] = [
    "32em64t-2n8c2t-pci-normalio.xml",
    "32em64t-2n8c2t-pci-normalio.xml",
    "linux-32intel64-2p8co2t+8ve.xml",
    "linux-32intel64-2p8co2t+8ve.xml",
    "linux-32intel64-2p8co2t+8ve.xml",
    "24em64t-2n6c2t-pci.xml",
    "24em64t-2n6c2t-pci.xml",
    "memorysidecaches.xml",
    "linux-40intel64-2g2n4c+pcilocality.xml",
    "16intel64-manyVFs.xml",
]


def default_corpus() -> Path:
    return HERE.parent / "tests" / "data" / "hwloc-xml"


def generate(corpus: Path, out: Path) -> list[Path]:
    """Write every example under `out` (examples/ layout); returns the files written."""
    written: list[Path] = []
    (out / "hosts").mkdir(parents=True, exist_ok=True)
    (out / "fleet").mkdir(parents=True, exist_ok=True)
    for name, (source, seed) in HOSTS.items():
        chd = realistic_host(chd_from_hwloc_xml(corpus / source), name, seed=seed, origin=source)
        path = out / "hosts" / f"{name}.yaml"
        path.write_text(dump(chd), encoding="utf-8")
        written.append(path)
    for index, source in enumerate(FLEET, start=1):
        host_id = f"compute-{index:02d}"
        chd = realistic_host(
            chd_from_hwloc_xml(corpus / source), host_id, seed=index, origin=source
        )
        path = out / "fleet" / f"{host_id}.yaml"
        path.write_text(dump(chd), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"hwloc XML corpus not found at {args.corpus}; give --corpus", file=sys.stderr)
        return 1
    for path in generate(args.corpus, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
