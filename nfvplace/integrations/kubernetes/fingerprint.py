"""The pod fingerprint a NodeResourceTopology exporter publishes, and which pods an object shows.

NFD's topology-updater and the resource-topology-exporter write, beside a node's counts, the
fingerprint of the pods those counts were read with: the top-level attribute
`nodeTopologyPodsFingerprint` (and `nodeTopologyPodsFingerprintMethod`, how the pods were chosen),
computed by the Go module github.com/k8stopologyawareschedwg/podfingerprint (v0.2.2, `Sign`):
each pod's namespace/name pair hashed with xxHash64 (the name seeded with the namespace's hash),
the hashes sorted, each written as 8 little-endian bytes into one xxHash64, whose digest
(big-endian, hex) follows the prefix `pfp0` and the version `v001`. The NodeResourceTopology
scheduler plugin's "overreserve" cache compares it with the pods it knows on the node.

nfvplace reads it to tell exactly which of the pods it assumed on a node an object shows
(`shown`): the pods the pod watch knows there are certain (seen running) or not (bound, not yet
running; left lately), and the object's fingerprint is matched against the sets they can make.
Only the method `all` (or no method: every pod the kubelet admitted) is read; other methods
(`with-exclusive-resources`) leave the object unsigned for nfvplace.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import combinations
from typing import Any

ATTRIBUTE = "nodeTopologyPodsFingerprint"
METHOD = "nodeTopologyPodsFingerprintMethod"
METHOD_ALL = "all"
PREFIX = "pfp0v001"
SEARCHED = 10
"""Up to this many uncertain pods on a node, every set they can make is tried when the likely ones
(arrivals and departures in the order the pod watch saw them) did not match: 2**10 signs."""

_M = (1 << 64) - 1
_P1, _P2, _P3 = 11400714785074694791, 14029467366897019727, 1609587929392839161
_P4, _P5 = 9650029242287828579, 2870177450012600261


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def xxh64(data: bytes, seed: int = 0) -> int:
    """xxHash64 (the reference algorithm, as github.com/OneOfOne/xxhash computes it)."""
    size, at = len(data), 0
    if size >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed, (seed - _P1) & _M]
        stripes = size // 32
        lanes = struct.unpack_from(f"<{stripes * 4}Q", data)
        for i in range(0, stripes * 4, 4):
            v = [_round(v[j], lanes[i + j]) for j in range(4)]
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for lane in v:
            h = ((h ^ _round(0, lane)) * _P1 + _P4) & _M
        at = stripes * 32
    else:
        h = (seed + _P5) & _M
    h = (h + size) & _M
    while at + 8 <= size:
        (k,) = struct.unpack_from("<Q", data, at)
        h = (_rotl(h ^ _round(0, k), 27) * _P1 + _P4) & _M
        at += 8
    if at + 4 <= size:
        (k,) = struct.unpack_from("<I", data, at)
        h = (_rotl(h ^ (k * _P1 & _M), 23) * _P2 + _P3) & _M
        at += 4
    for byte in data[at:]:
        h = (_rotl(h ^ (byte * _P5 & _M), 11) * _P1) & _M
    h = ((h ^ (h >> 33)) * _P2) & _M
    h = ((h ^ (h >> 29)) * _P3) & _M
    return h ^ (h >> 32)


@lru_cache(maxsize=65_536)
def pod_hash(pod: str) -> int:
    """The hash of one pod, `namespace/name` (podfingerprint's `addHash`)."""
    namespace, _, name = pod.partition("/")
    return xxh64(name.encode(), xxh64(namespace.encode()))


def sign(pods: Iterable[str]) -> str:
    """The fingerprint of a set of pods (`namespace/name` each), as podfingerprint's `Sign`."""
    hashes = sorted(pod_hash(p) for p in pods)
    return PREFIX + f"{xxh64(struct.pack(f'<{len(hashes)}Q', *hashes)):016x}"


def read(nrt: Mapping[str, Any]) -> str | None:
    """The object's pod fingerprint, when it carries one nfvplace can match (version v001,
    method `all` or none); None otherwise."""
    found: dict[str, str] = {}
    for attribute in nrt.get("attributes") or ():
        if isinstance(attribute, Mapping) and attribute.get("name") in (ATTRIBUTE, METHOD):
            found[str(attribute["name"])] = str(attribute.get("value") or "")
    value = found.get(ATTRIBUTE, "")
    if not value.startswith(PREFIX) or found.get(METHOD, METHOD_ALL) != METHOD_ALL:
        return None
    return value


def shown(
    signed: str, certain: Iterable[str], arrivals: Sequence[str], departures: Sequence[str]
) -> frozenset[str] | None:
    """The set of pods `signed` was computed over, when one can be made from the pods known on the
    node: every pod `certain` (seen running there), some of `arrivals` (bound there, not known to
    be counted yet, in the order they were bound) and some of `departures` (seen leaving it
    lately, in the order they left). The likely sets first (the first i arrivals admitted, the
    first j departures released), then, for up to `SEARCHED` uncertain pods, any. None when no
    set matches (a pod the watch has not seen, or too many uncertain)."""
    base = frozenset(certain) - set(arrivals) - set(departures)
    for i in range(len(arrivals), -1, -1):
        for j in range(len(departures) + 1):
            pods = base | set(arrivals[:i]) | set(departures[j:])
            if sign(pods) == signed:
                return frozenset(pods)
    uncertain = [*arrivals, *departures]
    if len(uncertain) > SEARCHED:
        return None
    for size in range(len(uncertain) + 1):
        for chosen in combinations(uncertain, size):
            if sign(base | set(chosen)) == signed:
                return base | frozenset(chosen)
    return None
