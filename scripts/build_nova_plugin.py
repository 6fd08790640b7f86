"""Build `nfvplace-nova`, the Nova scheduler plug-ins alone, for Nova's own environment.

    python3 scripts/build_nova_plugin.py [-o dist]    # dist/nfvplace_nova-<version>-py3-none-any.whl

The wheel holds `nfvplace.integrations.nova` (the filter, the weigher and their translations, which
use the standard library only) under a minimal `nfvplace` package, declares `Requires-Python >=
3.10` and no dependency, and installs no console script: `pip install nfvplace_nova-*.whl` into the
scheduler's virtualenv or container image cannot break it. Nova's configuration names the same
classes as with the full package (`nfvplace.integrations.nova.NfvplaceFilter`); install one or the
other there, not both. Built with the standard library only (any Python 3.10+), reproducibly (fixed
timestamps).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "nfvplace" / "integrations" / "nova"
NAME = "nfvplace_nova"
TOP = '''"""nfvplace's OpenStack Nova scheduler plug-ins alone (the `nfvplace-nova` distribution).

The placement engine, its CLI and service are the `nfvplace` distribution; this one holds only
`nfvplace.integrations.nova`, for Nova's environment (docs/integrations/nova.md).
"""
'''
INTEGRATIONS = '"""Integrations of nfvplace with other schedulers."""\n'
STAMP = (2020, 1, 1, 0, 0, 0)


def version() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'^version = "([^"]+)"', text, re.MULTILINE)
    if found is None:
        raise SystemExit("pyproject.toml has no version")
    return found.group(1)


def files(release: str) -> dict[str, bytes]:
    """Path in the wheel -> content."""
    out = {
        "nfvplace/__init__.py": TOP.encode(),
        "nfvplace/integrations/__init__.py": INTEGRATIONS.encode(),
    }
    for path in sorted(SOURCE.glob("*.py")):
        out[f"nfvplace/integrations/nova/{path.name}"] = path.read_bytes()
    info = f"{NAME}-{release}.dist-info"
    out[f"{info}/METADATA"] = (
        "Metadata-Version: 2.1\n"
        "Name: nfvplace-nova\n"
        f"Version: {release}\n"
        "Summary: nfvplace's OpenStack Nova scheduler filter and weigher (standard library only)\n"
        "License: Apache-2.0\n"
        "Requires-Python: >=3.10\n"
        "\n"
        "NfvplaceFilter and NfvplaceWeigher ask an nfvplace service which hosts fit an NFV VM. "
        "See docs/integrations/nova.md in the nfvplace repository.\n"
    ).encode()
    out[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: nfvplace scripts/build_nova_plugin.py\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n"
    )
    out[f"{info}/top_level.txt"] = b"nfvplace\n"
    return out


def _record(contents: dict[str, bytes], record: str) -> bytes:
    lines = []
    for path, data in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{path},sha256={digest},{len(data)}")
    lines.append(f"{record},,")
    return ("\n".join(lines) + "\n").encode()


def build(folder: Path) -> Path:
    release = version()
    contents = files(release)
    record = f"{NAME}-{release}.dist-info/RECORD"
    contents[record] = _record(contents, record)
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{NAME}-{release}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in contents.items():
            entry = zipfile.ZipInfo(path, STAMP)
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, data, zipfile.ZIP_DEFLATED)
    return wheel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "dist")
    print(build(parser.parse_args().output))


if __name__ == "__main__":
    main()
