"""hwloc through the pyhwloc bindings, always in a child process.

pyhwloc 3.0.1 bundles an hwloc 3.0 snapshot whose XML loader segfaults on `<distances2>` without a
`name` (fixed upstream in hwloc 5d81df89d). A segfault cannot be caught in-process, so hwloc only ever
runs in a child process (`_pyhwloc_child.py`), and for XML files with
`TopologyFlags.NO_DISTANCES` as well. A crash, a hang (timeout) or any failure becomes a
`DiscoveryError` with the reason.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import errors
from ..errors import DiscoveryError

# Run by path with -P (its folder is not put on sys.path): it imports only pyhwloc, so it starts fast.
CHILD = Path(__file__).with_name("_pyhwloc_child.py")
DEFAULT_TIMEOUT = 60.0


def _describe(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"hwloc crashed ({name})"
    return f"hwloc failed (exit status {returncode})"


def _run_child(args: list[str], source: str, timeout: float) -> str:
    try:
        done = subprocess.run(
            [sys.executable, "-P", str(CHILD), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise DiscoveryError(
            errors.DISCOVERY_FAILED, f"hwloc took longer than {timeout:.0f} s", file=source
        ) from exc
    except OSError as exc:
        raise DiscoveryError(
            errors.DISCOVERY_FAILED, f"cannot start the hwloc helper: {exc}", file=source
        ) from exc
    if done.returncode != 0:
        last = (done.stderr or "").strip().splitlines()[-1:] or [""]
        detail = f": {last[0]}" if last[0] else ""
        raise DiscoveryError(
            errors.DISCOVERY_FAILED, f"{_describe(done.returncode)}{detail}", file=source
        )
    return done.stdout


def export_live_xml(timeout: float = DEFAULT_TIMEOUT) -> str:
    """This host's topology as hwloc exports it (XML v3 with pyhwloc 3), disallowed PUs included."""
    return _run_child(["live"], "<live host>", timeout)


@dataclass(frozen=True, slots=True)
class HwlocCounts:
    packages: int
    numa_nodes: int
    cores: int
    pus: int


def hwloc_counts(
    path: str | Path, timeout: float = DEFAULT_TIMEOUT, *, guarded: bool = True
) -> HwlocCounts:
    """Counts hwloc itself reports for an XML file (disallowed objects included); a cross-check.

    `guarded=False` keeps distances, which crashes pyhwloc 3.0.1 on unnamed `<distances2>`; the
    crash is still contained in the child and reported as a DiscoveryError.
    """
    mode = "counts" if guarded else "counts-unguarded"
    out = _run_child([mode, str(path)], str(path), timeout)
    try:
        data = json.loads(out)
        return HwlocCounts(
            packages=int(data["packages"]),
            numa_nodes=int(data["numa_nodes"]),
            cores=int(data["cores"]),
            pus=int(data["pus"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise DiscoveryError(
            errors.DISCOVERY_FAILED,
            f"unexpected output from the hwloc helper: {out[:200]!r}",
            file=str(path),
        ) from exc
